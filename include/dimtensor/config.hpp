#pragma once
/// @file
/// @brief Configuration: the index type, the one host/device macro and the
/// macro that declares a dimension.  Every macro of the library lives here.

#include <cstdint>
#include <string_view>

#if defined(__CUDACC__) || defined(__HIPCC__)
/// Marks a function callable from host and device code (Thrust backend under CUDA).
#define DIMTENSOR_HOST_DEVICE __host__ __device__
#else
/// Marks a function callable from host and device code (Thrust backend under CUDA).
#define DIMTENSOR_HOST_DEVICE
#endif

/// @brief Declares a dimension tag.
///
/// `DIMTENSOR_DIM(Batch);` declares `struct Batch`, a type that names a
/// dimension in tensor types (`tensor<float, Batch, Queries>`) and in
/// diagnostics (which print plain `Batch`), and whose values are named
/// extents or indices: `Batch(2)`.  `Batch::fixed<8>` is the dimension with
/// the static extent 8.
#define DIMTENSOR_DIM(name)                                        \
  struct name final : ::dimtensor::dim<name> {                     \
    using ::dimtensor::dim<name>::dim;                             \
    static constexpr ::std::string_view dim_name = #name;          \
  }

/// Asks the compiler to vectorize the next loop (OpenMP simd when enabled).
/// Empty under clang, which vectorizes these loops unasked and warns
/// (-Wpass-failed) when a forced vectorization fails.
#if defined(__clang__)
#define DIMTENSOR_SIMD
#elif defined(_OPENMP)
#define DIMTENSOR_SIMD _Pragma("omp simd")
#elif defined(__GNUC__)
#define DIMTENSOR_SIMD _Pragma("GCC ivdep")
#else
#define DIMTENSOR_SIMD
#endif

namespace dimtensor {
/// Signed index and extent type used throughout (PyTorch uses int64 too).
using index_t = std::int64_t;
}  // namespace dimtensor
