#pragma once
/// @file
/// @brief The CPU backend's gather along one dim (index_select, embedding
/// lookups), the index check that precedes it, and the scatter-add that is
/// the gather's gradient.

#include <algorithm>
#include <cstddef>

#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>

namespace dimtensor {

/// The position of the first of @p count indices outside [0, @p extent), or -1.
template <class I>
index_t backend_first_out_of_range(cpu, I const* indices, index_t count, index_t extent) {
  for (index_t k = 0; k < count; ++k) {
    auto const i = static_cast<index_t>(indices[k]);
    if (i < 0 || i >= extent) return k;
  }
  return -1;
}

/// @brief `dst[o][k][i] = src[o][indices[k]][i]`.
///
/// @p src is row-major [outer, extent, inner], @p dst row-major
/// [outer, count, inner]; the indices must already be checked against
/// extent (backend_first_out_of_range).
template <class T, class I>
void backend_gather(cpu, T* dst, T const* src, index_t outer, index_t extent, index_t inner, I const* indices,
                    index_t count) {
  index_t const rows = outer * count;
  if (rows == 0 || inner == 0) return;
  backends::cpu::parallel_for(rows, inner, [&](index_t begin, index_t end) {
    for (index_t r = begin; r < end; ++r) {
      index_t const o = r / count;
      index_t const k = r % count;
      T const* in = src + (o * extent + static_cast<index_t>(indices[k])) * inner;
      T* out = dst + r * inner;
      DIMTENSOR_SIMD
      for (index_t j = 0; j < inner; ++j) out[j] = in[j];
    }
  });
}

/// @brief `dst[o][indices[k]][i] += src[o][k][i]` for every k: the gradient
/// of backend_gather (repeated indices add up).
///
/// @p src is row-major [outer, count, inner], @p dst row-major
/// [outer, extent, inner]; the indices must be in [0, extent).  The entries
/// whose index is @p skip add nothing (an embedding's padding index; -1
/// for none).  Threads split the (o, i) positions, and each runs over every
/// k in order, so no two threads write one element and the sums do not
/// depend on the thread count.
template <class T, class I>
void backend_index_add(cpu, T* dst, T const* src, index_t outer, index_t extent, index_t inner, I const* indices,
                       index_t count, index_t skip) {
  index_t const columns = outer * inner;
  if (columns == 0 || count == 0) return;
  backends::cpu::parallel_for(columns, count, [&](index_t begin, index_t end) {
    for (index_t p = begin; p < end;) {
      // The run of positions [p, p + n) that share one o.
      index_t const o = p / inner;
      index_t const i0 = p % inner;
      index_t const n = std::min(inner - i0, end - p);
      T const* in = src + o * count * inner + i0;
      T* out = dst + o * extent * inner + i0;
      for (index_t k = 0; k < count; ++k) {
        if (static_cast<index_t>(indices[k]) == skip) continue;
        T const* from = in + k * inner;
        T* to = out + static_cast<index_t>(indices[k]) * inner;
        DIMTENSOR_SIMD
        for (index_t j = 0; j < n; ++j) to[j] += from[j];
      }
      p += n;
    }
  });
}

}  // namespace dimtensor
