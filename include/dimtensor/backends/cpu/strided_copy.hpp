#pragma once
/// @file
/// @brief The CPU backend's strided copy: the loop behind the structural
/// operations that copy (concat, repeat_interleave, merge of a
/// non-contiguous view).

#include <array>
#include <cstddef>

#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/shape.hpp>

namespace dimtensor {

/// @brief Copies the elements of extents @p ext from @p src (strides
/// @p src_str) to @p dst (strides @p dst_str), both in elements.
///
/// A source stride of 0 repeats the element it reads, which is how
/// repeat_interleave broadcasts.  The destination must not overlap the source.
template <class T, std::size_t R>
void backend_strided_copy(cpu, T* dst, std::array<index_t, R> const& dst_str, T const* src,
                          std::array<index_t, R> const& src_str, std::array<index_t, R> const& ext) {
  index_t const n = detail::element_count(ext);
  if (n == 0) return;
  if constexpr (R == 0) {
    dst[0] = src[0];
  } else {
    index_t const inner = ext[R - 1];
    index_t const rows = n / inner;
    index_t const ds = dst_str[R - 1];
    index_t const ss = src_str[R - 1];
    backends::cpu::parallel_for(rows, inner, [&](index_t begin, index_t end) {
      // The row's multi-index, kept up to date by an odometer instead of
      // dividing for every row.
      std::array<index_t, (R > 1 ? R - 1 : 1)> idx{};
      index_t rem = begin;
      for (std::size_t d = R - 1; d-- > 0;) {
        idx[d] = rem % ext[d];
        rem /= ext[d];
      }
      for (index_t r = begin; r < end; ++r) {
        index_t doff = 0;
        index_t soff = 0;
        for (std::size_t d = 0; d + 1 < R; ++d) {
          doff += idx[d] * dst_str[d];
          soff += idx[d] * src_str[d];
        }
        T* out = dst + doff;
        T const* in = src + soff;
        if (ds == 1 && ss == 1) {
          DIMTENSOR_SIMD
          for (index_t j = 0; j < inner; ++j) out[j] = in[j];
        } else {
          for (index_t j = 0; j < inner; ++j) out[j * ds] = in[j * ss];
        }
        for (std::size_t d = R - 1; d-- > 0;) {
          if (++idx[d] < ext[d]) break;
          idx[d] = 0;
        }
      }
    });
  }
}

}  // namespace dimtensor
