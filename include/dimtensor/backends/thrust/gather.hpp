#pragma once
/// @file
/// @brief The Thrust backend's gather along one dim (index_select, embedding
/// lookups), the index check that precedes it, and the scatter-add that is
/// the gather's gradient.

#include <dimtensor/backends/thrust/assign.hpp>
#include <dimtensor/backends/thrust/storage.hpp>
#include <dimtensor/config.hpp>

#include <thrust/find.h>
#include <thrust/iterator/counting_iterator.h>

namespace dimtensor {

namespace backends::thrust {

/// Whether index k lies outside [0, extent) (a predicate for find_if).
template <class I>
struct index_out_of_range {
  I const* indices;  ///< The indices.
  index_t extent;    ///< The extent they index.
  /// Whether index @p k is invalid.
  DIMTENSOR_HOST_DEVICE bool operator()(index_t k) const {
    auto const i = static_cast<index_t>(indices[k]);
    return i < 0 || i >= extent;
  }
};

/// One element of backend_gather: `dst[o][k][i] = src[o][indices[k]][i]`.
template <class T, class I>
struct gather_element {
  T* dst;            ///< The [outer, count, inner] output.
  T const* src;      ///< The [outer, extent, inner] input.
  index_t extent;    ///< The extent of the gathered dim in src.
  index_t inner;     ///< The product of the extents after it.
  I const* indices;  ///< The count indices.
  index_t count;     ///< The number of indices.

  /// Writes flat element @p e of dst.
  DIMTENSOR_HOST_DEVICE void operator()(index_t e) const {
    index_t const i = e % inner;
    index_t const r = e / inner;  // o * count + k
    index_t const o = r / count;
    index_t const k = r - o * count;
    dst[e] = src[(o * extent + static_cast<index_t>(indices[k])) * inner + i];
  }
};

/// @brief One (o, i) column of backend_index_add: adds the column's count
/// source elements into dst in the order of k, so no two threads write one
/// element and the sums are the same on every system.
template <class T, class I>
struct index_add_column {
  T* dst;            ///< The [outer, extent, inner] output.
  T const* src;      ///< The [outer, count, inner] input.
  index_t extent;    ///< The extent of the indexed dim in dst.
  index_t inner;     ///< The product of the extents after it.
  I const* indices;  ///< The count indices.
  index_t count;     ///< The number of indices.
  index_t skip;      ///< The index whose entries add nothing (-1: none).

  /// Adds column @p p (= o * inner + i).
  DIMTENSOR_HOST_DEVICE void operator()(index_t p) const {
    index_t const o = p / inner;
    index_t const i = p - o * inner;
    T const* from = src + o * count * inner + i;
    T* to = dst + o * extent * inner + i;
    for (index_t k = 0; k < count; ++k) {
      index_t const at = static_cast<index_t>(indices[k]);
      if (at != skip) to[at * inner] += from[k * inner];
    }
  }
};

}  // namespace backends::thrust

/// The position of the first of @p count indices outside [0, @p extent), or -1.
template <class System, class I>
index_t backend_first_out_of_range(thrust_backend<System>, I const* indices, index_t count, index_t extent) {
  if (count <= 0) return -1;
  ::thrust::counting_iterator<index_t> const first(0);
  auto const hit = ::thrust::find_if(thrust_backend<System>::policy(), first, first + count,
                                     backends::thrust::index_out_of_range<I>{indices, extent});
  index_t const k = static_cast<index_t>(hit - first);
  return k < count ? k : -1;
}

/// @brief `dst[o][k][i] = src[o][indices[k]][i]`.
///
/// @p src is row-major [outer, extent, inner], @p dst row-major
/// [outer, count, inner]; the indices must already be checked against
/// extent (backend_first_out_of_range).
template <class System, class T, class I>
void backend_gather(thrust_backend<System>, T* dst, T const* src, index_t outer, index_t extent, index_t inner,
                    I const* indices, index_t count) {
  index_t const rows = outer * count;
  if (rows == 0 || inner == 0) return;
  backends::thrust::for_each_index<thrust_backend<System>>(
      rows * inner, backends::thrust::gather_element<T, I>{dst, src, extent, inner, indices, count});
}

/// @brief `dst[o][indices[k]][i] += src[o][k][i]` for every k: the gradient
/// of backend_gather (repeated indices add up).
///
/// @p src is row-major [outer, count, inner], @p dst row-major
/// [outer, extent, inner]; the indices must be in [0, extent).  The entries
/// whose index is @p skip add nothing (-1: none).  One thread per (o, i)
/// column runs over every k in order, so no two threads write one element
/// and the sums do not depend on the system or its thread count.
template <class System, class T, class I>
void backend_index_add(thrust_backend<System>, T* dst, T const* src, index_t outer, index_t extent, index_t inner,
                       I const* indices, index_t count, index_t skip) {
  index_t const columns = outer * inner;
  if (columns == 0 || count == 0) return;
  backends::thrust::for_each_index<thrust_backend<System>>(
      columns, backends::thrust::index_add_column<T, I>{dst, src, extent, inner, indices, count, skip});
}

}  // namespace dimtensor
