#pragma once
/// @file
/// @brief The Thrust backend's elementwise loop (one `thrust::for_each` over
/// the flat index of the output, reading a fused expression through its
/// device-callable evaluator), copies, fills and the transfers to and from
/// host memory.

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include <dimtensor/backends/thrust/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>

#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#if defined(__CUDACC__)
#include <cuda_runtime_api.h>
#endif

namespace dimtensor {

namespace backends::thrust {

/// Runs `f(i)` for every i in [0, n) on the system of @p Backend.
template <class Backend, class F>
void for_each_index(index_t n, F const& f) {
  if (n <= 0) return;
  ::thrust::for_each_n(Backend::policy(), ::thrust::counting_iterator<index_t>(0), n, f);
}

/// The multi-index of flat position @p i in row-major extents @p ext.
template <std::size_t R>
DIMTENSOR_HOST_DEVICE inline void unflatten(index_t i, std::array<index_t, R> const& ext, index_t* idx) {
  for (std::size_t d = R; d-- > 0;) {
    idx[d] = i % ext[d];
    i /= ext[d];
  }
}

/// Element i of the output: the evaluator read at i's position.  One functor
/// for both ways into an evaluator; `flat` is the same for every i.
template <class T, std::size_t R, class Ev>
struct assign_element {
  /// The output, row-major.
  T* dst;
  /// The output's extents.
  std::array<index_t, R> ext;
  /// The expression's evaluator.
  Ev ev;
  /// Whether the evaluator reads every leaf at the flat index.
  bool flat;

  /// Writes element @p i.
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const {
    if constexpr (R == 0) {
      dst[0] = static_cast<T>(ev.at_flat(0));
    } else {
      if (flat) {
        dst[i] = static_cast<T>(ev.at_flat(i));
        return;
      }
      index_t idx[R];
      unflatten<R>(i, ext, idx);
      Ev local = ev;
      local.row(idx);
      dst[i] = static_cast<T>(local.at(idx[R - 1]));
    }
  }
};

/// Writes @p v to every element.
template <class T>
struct fill_element {
  /// The elements.
  T* dst;
  /// The value.
  T v;
  /// Writes element @p i.
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const { dst[i] = v; }
};

#if defined(__CUDACC__)
/// Throws device_error naming @p call when @p status is not cudaSuccess.
inline void check_cuda(cudaError_t status, char const* call) {
  if (status != cudaSuccess) {
    throw device_error(std::string("dimtensor: ") + call + " failed: " + cudaGetErrorString(status));
  }
}
#endif

}  // namespace backends::thrust

/// Writes the expression read through evaluator @p ev into @p dst, a
/// row-major buffer of extents @p ext, in one pass over the flat index.
template <class System, class T, std::size_t R, class Ev>
void backend_assign(thrust_backend<System>, T* dst, std::array<index_t, R> const& ext, Ev const& ev) {
  index_t const n = detail::element_count(ext);
  if (n == 0) return;
  backends::thrust::for_each_index<thrust_backend<System>>(
      R == 0 ? 1 : n, backends::thrust::assign_element<T, R, Ev>{dst, ext, ev, ev.flat()});
}

/// Runs `f(i)` for every i in [0, n) on the system; @p f is a function
/// object callable on host and device (DIMTENSOR_HOST_DEVICE).
template <class System, class F>
void backend_for_each(thrust_backend<System>, index_t n, F const& f) {
  backends::thrust::for_each_index<thrust_backend<System>>(n, f);
}

/// Copies @p n elements within the system's memory.
template <class System, class T>
void backend_copy(thrust_backend<System>, T* dst, T const* src, index_t n) {
  if (n <= 0) return;
  ::thrust::copy_n(thrust_backend<System>::policy(), src, n, dst);
}

/// Writes @p v to @p n elements.
template <class System, class T>
void backend_fill(thrust_backend<System>, T* dst, index_t n, T v) {
  backends::thrust::for_each_index<thrust_backend<System>>(n, backends::thrust::fill_element<T>{dst, v});
}

/// Copies @p n elements from host memory @p src into the system's memory @p dst.
template <class System, class T>
void backend_copy_from_host(thrust_backend<System>, T* dst, T const* src, index_t n) {
  if (n <= 0) return;
  if constexpr (System::host_accessible) {
    std::copy(src, src + n, dst);
  } else {
#if defined(__CUDACC__)
    backends::thrust::check_cuda(cudaMemcpy(dst, src, static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyHostToDevice),
                                 "cudaMemcpy to the device");
#endif
  }
}

/// Copies @p n elements of the system's memory @p src into host memory @p dst.
template <class System, class T>
void backend_copy_to_host(thrust_backend<System>, T* dst, T const* src, index_t n) {
  if (n <= 0) return;
  if constexpr (System::host_accessible) {
    std::copy(src, src + n, dst);
  } else {
#if defined(__CUDACC__)
    backends::thrust::check_cuda(cudaMemcpy(dst, src, static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyDeviceToHost),
                                 "cudaMemcpy to the host");
#endif
  }
}

}  // namespace dimtensor
