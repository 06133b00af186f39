#pragma once
/// @file
/// @brief The Thrust backend's storage: one Thrust vector of the system,
/// shared by a tensor and its views.
///
/// The vector's allocator constructs nothing: a tensor's constructors write
/// every element they promise (zeros, a value, an expression), and a
/// value-initializing allocator would add a pass over fresh memory.

#include <type_traits>

#include <dimtensor/backends/thrust/system.hpp>
#include <dimtensor/config.hpp>

#include <thrust/system/cpp/vector.h>
#if defined(_OPENMP)
#include <thrust/system/omp/vector.h>
#endif
#if defined(__CUDACC__)
#include <thrust/system/cuda/vector.h>
#endif

namespace dimtensor {

namespace backends::thrust {

/// @brief @p Base, a Thrust allocator, whose construct leaves elements
/// uninitialized (elements are trivially copyable).
template <class Base>
struct uninitialized_allocator : Base {
  /// The element type.
  using value_type = typename Base::value_type;
  /// The same allocator for another element type.
  template <class U>
  struct rebind {
    /// The rebound allocator.
    using other = uninitialized_allocator<typename Base::template rebind<U>::other>;
  };
  uninitialized_allocator() = default;
  /// Converts from the allocator of another element type (allocators are stateless).
  template <class B>
  uninitialized_allocator(uninitialized_allocator<B> const&) {}  // NOLINT: implicit, as allocators convert
  /// Leaves the element as it is.
  template <class U>
  DIMTENSOR_HOST_DEVICE void construct(U*) {}
};

/// The Thrust vector of a system.
template <class System, class T>
struct vector_of;
/// The C++ system's vector.
template <class T>
struct vector_of<thrust_system::cpp, T> {
  /// Its type.
  using type = ::thrust::cpp::vector<T, uninitialized_allocator<::thrust::cpp::allocator<T>>>;
};
#if defined(_OPENMP)
/// The OpenMP system's vector.
template <class T>
struct vector_of<thrust_system::omp, T> {
  /// Its type.
  using type = ::thrust::omp::vector<T, uninitialized_allocator<::thrust::omp::allocator<T>>>;
};
#endif
#if defined(__CUDACC__)
/// The CUDA system's vector (device memory).
template <class T>
struct vector_of<thrust_system::cuda, T> {
  /// Its type.
  using type = ::thrust::cuda::vector<T, uninitialized_allocator<::thrust::cuda::allocator<T>>>;
};
#endif

}  // namespace backends::thrust

template <class System>
struct thrust_backend {
  /// The Thrust system.
  using system = System;
  /// Whether the host may read and write the elements directly (host systems).
  static constexpr bool host_accessible = System::host_accessible;
  /// The backend's name in messages ("thrust_omp", "cuda").
  static constexpr std::string_view name = System::name;
  /// Thrust's execution policy for the system.
  static auto policy() { return System::policy(); }

  /// Storage of @p n elements of type T in the system's memory.
  template <class T>
  class storage {
    static_assert(std::is_trivially_copyable_v<T>, "dimtensor: element types must be trivially copyable");

   public:
    /// Allocates @p n uninitialized elements.
    explicit storage(index_t n) : elements_(static_cast<std::size_t>(n > 0 ? n : 1)), size_(n) {}
    storage(storage const&) = delete;
    storage& operator=(storage const&) = delete;

    /// First element (device memory under CUDA).
    T* data() noexcept { return ::thrust::raw_pointer_cast(elements_.data()); }
    /// First element (device memory under CUDA).
    T const* data() const noexcept { return ::thrust::raw_pointer_cast(elements_.data()); }
    /// Number of elements.
    index_t size() const noexcept { return size_; }

   private:
    typename backends::thrust::vector_of<System, T>::type elements_;
    index_t size_;
  };
};

}  // namespace dimtensor
