#pragma once
/// @file
/// @brief The forward pass's online path, past 1,024 keys on the
/// register tiles: a block goes over the keys a chunk at a time with a
/// running maximum and sum per row.

// IWYU pragma: private, include <dimtensor/backends/cpu/attention.hpp>

/// Defined once an attention kernel header is included (src/cpu/kernels.inl
/// refuses one included before the level's target pragma).
#define DIMTENSOR_BACKENDS_CPU_ATTENTION_HPP 1

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/backends/cpu/attention/tiles.hpp>
#include <dimtensor/config.hpp>

namespace dimtensor::backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {
namespace attention_detail {

/// One query block of the forward pass on the online path: as
/// attention_block_tiled, but over the keys attention_key_chunk at a time
/// (@p scores holds a block's scores over one chunk), the output rows kept
/// as running sums that shrink by exp(old maximum − new) when a chunk
/// raises a row's maximum, and divided by the row's sum at the end.  The
/// row statistics (@p m, @p inv) are those of the whole row, as the
/// backward pass needs them.
template <class T>
void attention_block_chunked(attention_problem<T> const& p, index_t b, index_t const* idx, T const* const* q,
                             index_t rows, index_t width, index_t const* len, T const* keys, T* scores, T* const* out,
                             T* m, T* inv) {
#if DIMTENSOR_HAS_SIMD
  if constexpr (std::is_same_v<T, float>) {
    float sum[attention_block_max], alpha[attention_block_max];
    index_t part[attention_block_max];
    for (index_t r = 0; r < rows; ++r) {
      m[r] = -std::numeric_limits<float>::infinity();
      sum[r] = 0.0f;
      std::fill(out[r], out[r] + p.dv, 0.0f);
    }
    for (index_t j0 = 0; j0 < width; j0 += attention_key_chunk) {
      index_t const n = std::min(attention_key_chunk, width - j0);
      for (index_t r = 0; r < rows; ++r) part[r] = std::clamp<index_t>(len[r] - j0, 0, n);
      index_t const lds = attention_padded(n);
      // The chunk's key panels start at key j0, a multiple of 16.
      attention_scores_tiled(q, rows, part, keys + j0 * p.d, n, p.d, scores, lds);
      attention_mask_scores(p, b, idx, rows, j0, part, scores, lds);
      attention_online_rows(scores, lds, rows, n, part, p.scale, m, sum, alpha);
      for (index_t r = 0; r < rows; ++r) {
        if (alpha[r] != 1.0f) attention_scale_row(out[r], p.dv, alpha[r]);
      }
      attention_values_tiled(scores, lds, false, rows, n, part, p.v.row(b, j0), p.v.row_stride, p.dv, nullptr, out,
                             true);
    }
    for (index_t r = 0; r < rows; ++r) {
      if (len[r] == 0) {
        m[r] = 0.0f;
        inv[r] = 0.0f;
        continue;
      }
      inv[r] = 1.0f / sum[r];
      attention_scale_row(out[r], p.dv, inv[r]);
    }
    return;
  }
#endif
  (void)p, (void)b, (void)idx, (void)q, (void)rows, (void)width, (void)len, (void)keys, (void)scores, (void)out, (void)m,
      (void)inv;
}

}  // namespace attention_detail
}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace dimtensor::backends::cpu
