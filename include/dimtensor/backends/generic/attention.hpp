#pragma once
/// @file
/// @brief Scaled dot-product attention's kernels for every backend, from
/// the kernels of the backend contract: per batch entry, the scores by
/// `backend_gemm_batched`, scaled by `backend_assign`, the weights by
/// `backend_masked_softmax` (d2l's masking: scores past a row's valid
/// length replaced by -1e6) or `backend_softmax`, the output by
/// `backend_gemm_batched`; the backward pass forms the weights again and
/// runs `backend_masked_softmax_backward` between four products.  The key
/// masks and the additive mask are one more `backend_assign` on the scaled
/// scores; causal masking is each row's valid length, made on the host.
///
/// This is Thrust's generic-algorithm idea: a backend that has nothing
/// better names these in its `backend_attention_forward` and
/// `backend_attention_backward` (Thrust's host systems and CUDA do; the
/// CPU's are fused: backends/cpu/attention.hpp).  The problem's batch offsets
/// are host memory, its valid lengths the backend's (kernel/attention.hpp).  The row
/// statistics the fused kernels keep are not written: the backward pass
/// here forms the weights again.  Scratch: three [queries, kv] buffers.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <dimtensor/config.hpp>
#include <dimtensor/kernel/attention.hpp>
#include <dimtensor/kernel/blas_layout.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/evaluator.hpp>
#include <dimtensor/kernel/math.hpp>

namespace dimtensor::backends::generic {

/// The value d2l's masked_softmax gives the scores past a row's valid length.
inline constexpr double attention_masked_score = -1e6;

namespace attention_detail {

/// A row-major matrix view of @p rows x ... with row stride @p ld.
template <class T>
kernel::strided_matrix<T> rows_of(T* data, index_t ld) {
  return {data, 0, ld, 1};
}

/// The transpose of a row-major matrix with row stride @p ld.
template <class T>
kernel::strided_matrix<T> columns_of(T* data, index_t ld) {
  return {data, 0, 1, ld};
}

/// @brief Entry @p b's rows of the lengths @p l, as the masked softmax of
/// its [queries, kv] scores reads them: a pointer and a repeat.
inline kernel::row_lengths entry_lengths(kernel::row_lengths l, index_t b, index_t queries) {
  if (l.repeat >= queries) return {l.data + b * queries / l.repeat, queries > 0 ? queries : 1};  // one per entry
  return {l.data + b * queries / l.repeat, l.repeat};  // the repeat divides the entry's rows
}

/// A scaled score under the key masks: the masked score where @p keep is
/// false or the additive mask @p a is at or below it, else s + a.
struct masked_score {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T s, T a, bool keep) const {
    T const masked = kernel::attention_masked_score<T>;
    return !keep || a <= masked ? masked : s + a;
  }
};

/// @brief Entry @p b's scaled scores @p s (queries x kv, dense) under the
/// key masks and additive mask of @p p (kernel/attention.hpp), in place.
template <class B, class T>
void mask_entry_scores(kernel::attention_problem<T> const& p, index_t b, T* s) {
  using dimtensor::detail::map_evaluator;
  using dimtensor::detail::scalar_evaluator;
  using dimtensor::detail::strided_evaluator;
  std::array<index_t, 2> const ext{p.queries, p.kv};
  strided_evaluator<T, 2> const scores{s, s, {p.kv, 1}, true};
  auto assign = [&](auto const& add, auto const& keep) {
    backend_assign(B{}, s, ext, map_evaluator<masked_score, strided_evaluator<T, 2>, std::decay_t<decltype(add)>,
                                              std::decay_t<decltype(keep)>>{masked_score{}, {scores, add, keep}});
  };
  auto with_keep = [&](auto const& add) {
    if (p.keep.data != nullptr) {
      bool const* const k = p.keep.row(b, 0);
      assign(add, strided_evaluator<bool, 2>{k, k, {p.keep.row_stride, 1}, false});
    } else {
      assign(add, scalar_evaluator<bool>{true});
    }
  };
  if (p.bias.data != nullptr) {
    T const* const a = p.bias.row(b, 0);
    with_keep(strided_evaluator<T, 2>{a, a, {p.bias.row_stride, 1}, false});
  } else {
    with_keep(scalar_evaluator<T>{T(0)});
  }
}

/// @brief Entry @p b's valid length of each query row with the causal
/// limit (kernel::attention_problem::length), in the backend's memory
/// @p out (queries of them), from the lengths brought to the host.
template <class B, class T>
void causal_entry_lengths(kernel::attention_problem<T> const& p, index_t b, index_t* out) {
  std::vector<index_t> host(static_cast<std::size_t>(p.queries), p.kv);
  if (p.lens.data != nullptr) {
    kernel::row_lengths const l = entry_lengths(p.lens, b, p.queries);
    index_t const distinct = (p.queries + l.repeat - 1) / l.repeat;
    std::vector<index_t> read(static_cast<std::size_t>(distinct));
    backend_copy_to_host(B{}, read.data(), l.data, distinct);
    for (index_t i = 0; i < p.queries; ++i) host[static_cast<std::size_t>(i)] = read[static_cast<std::size_t>(i / l.repeat)];
  }
  for (index_t i = 0; i < p.queries; ++i) {
    auto& l = host[static_cast<std::size_t>(i)];
    l = std::clamp<index_t>(i + p.kv - p.queries + 1, 0, l);
  }
  backend_copy_from_host(B{}, out, host.data(), p.queries);
}

/// @brief The weights of entry @p b (rows x kv, dense, into @p w) from the
/// scores it forms in @p s: s = q kᵀ / scale, the key masks, then the
/// (masked) softmax.
template <class B, class T>
void entry_weights(kernel::attention_problem<T> const& p, index_t b, T* s, T* w) {
  backend_gemm_batched(B{}, 1, p.queries, p.kv, p.d, rows_of(p.q.row(b, 0), p.q.row_stride),
                       columns_of(p.k.row(b, 0), p.k.row_stride), rows_of(s, p.kv));
  using dense = dimtensor::detail::strided_evaluator<T, 1>;
  using scaled = dimtensor::detail::map_evaluator<call::divides, dense, dimtensor::detail::scalar_evaluator<T>>;
  backend_assign(B{}, s, std::array<index_t, 1>{p.queries * p.kv},
                 scaled{call::divides{}, {dense{s, s, {1}, true}, dimtensor::detail::scalar_evaluator<T>{p.scale}}});
  // Past a row's length: d2l's -1e6 alone, the lowest value under masks
  // (below their masked score, so a row whose kept keys are all masked
  // stays uniform over them).
  T const fill = p.masks_keys() ? std::numeric_limits<T>::lowest() : static_cast<T>(attention_masked_score);
  if (p.masks_keys()) mask_entry_scores<B>(p, b, s);
  if (p.causal) {
    typename B::template storage<index_t> lens(p.queries);
    causal_entry_lengths<B>(p, b, lens.data());
    backend_masked_softmax(B{}, static_cast<T const*>(s), w, p.queries, p.kv, index_t{1},
                           static_cast<index_t const*>(lens.data()), index_t{1}, fill);
  } else if (p.lens.data != nullptr) {
    kernel::row_lengths const l = entry_lengths(p.lens, b, p.queries);
    backend_masked_softmax(B{}, static_cast<T const*>(s), w, p.queries, p.kv, index_t{1}, l.data, l.repeat, fill);
  } else {
    backend_softmax(B{}, static_cast<T const*>(s), w, p.queries, p.kv, index_t{1});
  }
}

}  // namespace attention_detail

/// @brief The forward pass: output rows @p o ([batch, queries, dv]) from
/// the problem @p p.  @p row_max and @p row_inv are not written.
template <class B, class T>
void attention_forward(kernel::attention_problem<T> const& p, kernel::attention_operand<T> const& o, T*, T*) {
  if (p.batch == 0 || p.queries == 0 || p.dv == 0) return;
  using storage_t = typename B::template storage<T>;
  index_t const n = p.queries * p.kv;
  storage_t s(n), w(n);
  for (index_t b = 0; b < p.batch; ++b) {
    attention_detail::entry_weights<B>(p, b, s.data(), w.data());
    backend_gemm_batched(B{}, 1, p.queries, p.dv, p.kv, attention_detail::rows_of(static_cast<T const*>(w.data()), p.kv),
                         attention_detail::rows_of(p.v.row(b, 0), p.v.row_stride),
                         attention_detail::rows_of(o.row(b, 0), o.row_stride));
  }
}

/// @brief The backward pass: the gradients @p dq, @p dk and @p dv of the
/// queries, keys and values from the output's gradient @p dout.  Each
/// entry's rows of the three are written (not added to).
template <class B, class T>
void attention_backward(kernel::attention_problem<T> const& p, T const*, T const*,
                        kernel::attention_operand<T const> const& dout, kernel::attention_operand<T> const& dq,
                        kernel::attention_operand<T> const& dk, kernel::attention_operand<T> const& dv) {
  if (p.batch == 0 || p.queries == 0 || p.kv == 0) return;
  using storage_t = typename B::template storage<T>;
  index_t const n = p.queries * p.kv;
  storage_t s(n), w(n), ds(n);
  using attention_detail::columns_of;
  using attention_detail::rows_of;
  T const* const wc = w.data();
  for (index_t b = 0; b < p.batch; ++b) {
    attention_detail::entry_weights<B>(p, b, s.data(), w.data());
    // dv = wᵀ dout; dw (into s) = dout vᵀ.
    backend_gemm_batched(B{}, 1, p.kv, p.dv, p.queries, columns_of(wc, p.kv), rows_of(dout.row(b, 0), dout.row_stride),
                         rows_of(dv.row(b, 0), dv.row_stride));
    backend_gemm_batched(B{}, 1, p.queries, p.kv, p.dv, rows_of(dout.row(b, 0), dout.row_stride),
                         columns_of(p.v.row(b, 0), p.v.row_stride), rows_of(s.data(), p.kv));
    // ds = the softmax's backward (0 past the lengths), then / scale.
    if (p.causal) {
      typename B::template storage<index_t> lens(p.queries);
      attention_detail::causal_entry_lengths<B>(p, b, lens.data());
      backend_masked_softmax_backward(B{}, wc, static_cast<T const*>(s.data()), ds.data(), p.queries, p.kv,
                                      index_t{1}, static_cast<index_t const*>(lens.data()), index_t{1});
    } else if (p.lens.data != nullptr) {
      kernel::row_lengths const l = attention_detail::entry_lengths(p.lens, b, p.queries);
      backend_masked_softmax_backward(B{}, wc, static_cast<T const*>(s.data()), ds.data(), p.queries, p.kv,
                                      index_t{1}, l.data, l.repeat);
    } else {
      backend_softmax_backward(B{}, wc, static_cast<T const*>(s.data()), ds.data(), p.queries, p.kv, index_t{1});
    }
    using dense = dimtensor::detail::strided_evaluator<T, 1>;
    using scaled = dimtensor::detail::map_evaluator<call::divides, dense, dimtensor::detail::scalar_evaluator<T>>;
    T* const d = ds.data();
    backend_assign(B{}, d, std::array<index_t, 1>{n},
                   scaled{call::divides{}, {dense{d, d, {1}, true}, dimtensor::detail::scalar_evaluator<T>{p.scale}}});
    T const* const dsc = ds.data();
    // dq = ds k; dk = dsᵀ q.
    backend_gemm_batched(B{}, 1, p.queries, p.d, p.kv, rows_of(dsc, p.kv), rows_of(p.k.row(b, 0), p.k.row_stride),
                         rows_of(dq.row(b, 0), dq.row_stride));
    backend_gemm_batched(B{}, 1, p.kv, p.d, p.queries, columns_of(dsc, p.kv), rows_of(p.q.row(b, 0), p.q.row_stride),
                         rows_of(dk.row(b, 0), dk.row_stride));
  }
}

}  // namespace dimtensor::backends::generic
