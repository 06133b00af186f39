// d2l's attention helpers written in libtorch, for the benchmarks' peers:
// the same operations in the same order as d2l/torch.py (sequence_mask with
// -1e6, masked_softmax, DotProductAttention's forward, transpose_qkv and
// transpose_output), and `to_torch`, a copy of a dimtensor tensor.
// Only under DIMTENSOR_HAVE_LIBTORCH.
#pragma once

#if DIMTENSOR_HAVE_LIBTORCH

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <torch/torch.h>

#include <dimtensor/dimtensor.hpp>

namespace dimtensor_bench {

/// A libtorch copy of @p t (float32 or int64), contiguous.
template <class Tensor>
torch::Tensor to_torch(Tensor const& t) {
  auto const c = dimtensor::eval(t).contiguous();
  std::vector<std::int64_t> sizes(c.extents().begin(), c.extents().end());
  auto const type = std::is_same_v<typename Tensor::value_type, float> ? torch::kFloat32 : torch::kInt64;
  return torch::from_blob(const_cast<typename Tensor::value_type*>(c.data()), sizes, type).clone();
}

/// d2l.sequence_mask: entries of @p x at or past each row's valid length
/// become @p value.
inline torch::Tensor sequence_mask(torch::Tensor x, torch::Tensor const& valid_len, float value) {
  auto const maxlen = x.size(1);
  auto const mask = torch::arange(maxlen, torch::kFloat32).index({torch::indexing::None, torch::indexing::Slice()}) <
                    valid_len.index({torch::indexing::Slice(), torch::indexing::None});
  x.index_put_({~mask}, value);
  return x;
}

/// d2l.masked_softmax over the last axis, 1-D or 2-D valid lengths (an
/// undefined tensor: plain softmax).
inline torch::Tensor masked_softmax(torch::Tensor const& x, torch::Tensor valid_lens) {
  if (!valid_lens.defined()) return torch::softmax(x, -1);
  auto const shape = x.sizes().vec();
  if (valid_lens.dim() == 1) {
    valid_lens = torch::repeat_interleave(valid_lens, shape[1]);
  } else {
    valid_lens = valid_lens.reshape(-1);
  }
  auto const masked = sequence_mask(x.reshape({-1, shape.back()}), valid_lens, -1e6F);
  return torch::softmax(masked.reshape(shape), -1);
}

/// d2l.DotProductAttention's forward without dropout.
inline torch::Tensor dot_product_attention(torch::Tensor const& q, torch::Tensor const& k, torch::Tensor const& v,
                                           torch::Tensor const& valid_lens) {
  auto const d = q.size(-1);
  auto const scores = torch::bmm(q, k.transpose(1, 2)) / std::sqrt(static_cast<double>(d));
  return torch::bmm(masked_softmax(scores, valid_lens), v);
}

/// d2l.transpose_qkv: [B, T, heads * d] -> [B * heads, T, d].
inline torch::Tensor transpose_qkv(torch::Tensor x, std::int64_t heads) {
  x = x.reshape({x.size(0), x.size(1), heads, -1});
  x = x.permute({0, 2, 1, 3});
  return x.reshape({-1, x.size(2), x.size(3)});
}

/// d2l.transpose_output, the inverse of transpose_qkv.
inline torch::Tensor transpose_output(torch::Tensor x, std::int64_t heads) {
  x = x.reshape({-1, heads, x.size(1), x.size(2)});
  x = x.permute({0, 2, 1, 3});
  return x.reshape({x.size(0), x.size(1), -1});
}

}  // namespace dimtensor_bench

#endif
