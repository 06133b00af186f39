#pragma once
/// @file
/// @brief The Thrust backend's strided copy (concat, repeat_interleave,
/// permuted copies before a contraction), one pass over the flat index.

#include <array>
#include <cstddef>

#include <dimtensor/backends/thrust/assign.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/shape.hpp>

namespace dimtensor {

namespace backends::thrust {

/// Element i (row-major over ext) from src's strides to dst's.
template <class T, std::size_t R>
struct strided_copy_element {
  /// The destination's first element.
  T* dst;
  /// The destination's strides.
  std::array<index_t, R> dst_str;
  /// The source's first element.
  T const* src;
  /// The source's strides.
  std::array<index_t, R> src_str;
  /// The extents copied.
  std::array<index_t, R> ext;

  /// Copies element @p i (row-major over ext).
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const {
    index_t doff = 0;
    index_t soff = 0;
    for (std::size_t d = R; d-- > 0;) {
      index_t const k = i % ext[d];
      i /= ext[d];
      doff += k * dst_str[d];
      soff += k * src_str[d];
    }
    dst[doff] = src[soff];
  }
};

}  // namespace backends::thrust

/// @brief Copies the elements of extents @p ext from @p src (strides
/// @p src_str) to @p dst (strides @p dst_str); a source stride of 0 repeats
/// its element.  The destination must not overlap the source.
template <class System, class T, std::size_t R>
void backend_strided_copy(thrust_backend<System>, T* dst, std::array<index_t, R> const& dst_str, T const* src,
                          std::array<index_t, R> const& src_str, std::array<index_t, R> const& ext) {
  index_t const n = detail::element_count(ext);
  if (n == 0) return;
  backends::thrust::for_each_index<thrust_backend<System>>(
      n, backends::thrust::strided_copy_element<T, R>{dst, dst_str, src, src_str, ext});
}

}  // namespace dimtensor
