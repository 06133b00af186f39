#pragma once
/// @file
/// @brief The Thrust backend's tag, `thrust_backend<System>`, and the
/// systems it runs on: Thrust's sequential C++ system, its OpenMP system
/// and, under nvcc, CUDA.
///
/// A system is a small struct that names Thrust's execution policy and
/// memory for it; everything else of the backend is written once over
/// `thrust_backend<System>`.  A system's header is included only where it
/// can compile: the OpenMP system with OpenMP enabled, CUDA under nvcc.

#include <string_view>

#include <dimtensor/config.hpp>

#include <thrust/execution_policy.h>
#include <thrust/system/cpp/execution_policy.h>
#if defined(_OPENMP)
#include <thrust/system/omp/execution_policy.h>
#endif
#if defined(__CUDACC__)
#include <thrust/system/cuda/execution_policy.h>
#endif

namespace dimtensor {

/// Thrust's systems, as the Thrust backend's template argument.
namespace thrust_system {

/// Thrust's sequential C++ system: host memory, one thread.
struct cpp {
  /// The name in messages.
  static constexpr std::string_view name = "thrust_cpp";
  /// Whether the host may read and write the elements directly.
  static constexpr bool host_accessible = true;
  /// Thrust's execution policy.
  static auto policy() { return ::thrust::cpp::par; }
};

#if defined(_OPENMP)
/// Thrust's OpenMP system: host memory, OpenMP threads.
struct omp {
  /// The name in messages.
  static constexpr std::string_view name = "thrust_omp";
  /// Whether the host may read and write the elements directly.
  static constexpr bool host_accessible = true;
  /// Thrust's execution policy.
  static auto policy() { return ::thrust::omp::par; }
};
#endif

#if defined(__CUDACC__)
/// Thrust's CUDA system: device memory, kernels on the current GPU.
struct cuda {
  /// The name in messages.
  static constexpr std::string_view name = "cuda";
  /// Whether the host may read and write the elements directly.
  static constexpr bool host_accessible = false;
  /// Thrust's execution policy.
  static auto policy() { return ::thrust::cuda::par; }
};
#endif

}  // namespace thrust_system

/// @brief The Thrust backend on @p System (one of `thrust_system::cpp`,
/// `omp`, `cuda`): Thrust algorithms over the flat index with
/// device-callable expression nodes, contractions through cuBLAS under CUDA
/// and through the CPU backend's GEMM on host systems.
template <class System>
struct thrust_backend;

/// The Thrust backend on its sequential C++ system.
using thrust_cpp = thrust_backend<thrust_system::cpp>;
#if defined(_OPENMP)
/// The Thrust backend on its OpenMP system.
using thrust_omp = thrust_backend<thrust_system::omp>;
#endif
#if defined(__CUDACC__)
/// The Thrust backend on CUDA: tensors in GPU memory.
using cuda = thrust_backend<thrust_system::cuda>;
#endif

}  // namespace dimtensor
