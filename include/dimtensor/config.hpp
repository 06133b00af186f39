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

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
/// Inlines a small math function into every loop that calls it, so that the
/// loop vectorizes (GCC's heuristics leave exp out of a SiLU's loop).
#define DIMTENSOR_ALWAYS_INLINE __attribute__((always_inline))
#else
/// Inlines a small math function into every loop that calls it (nvcc
/// decides for itself).
#define DIMTENSOR_ALWAYS_INLINE
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

/// @brief Declares a mesh axis tag.
///
/// `DIMTENSOR_AXIS(Data);` declares `struct Data`, the name of a group of
/// ranks a dim can be cut over: `Batch::sharded<Data>` (core/dim.hpp), and
/// what the diagnostics of sharded tensors print.
#define DIMTENSOR_AXIS(name)                                       \
  struct name final : ::dimtensor::axis<name> {                    \
    static constexpr ::std::string_view axis_name = #name;         \
  }

#if defined(DIMTENSOR_DOXYGEN)
/// @brief Names the backend of `tensor<T, ...>`, of the factories and of the
/// modules when none is named, e.g. `-DDIMTENSOR_DEFAULT_BACKEND=dimtensor::thrust_omp`
/// or `dimtensor::cuda`; unset, it is `dimtensor::cpu`.  Defining it includes
/// the Thrust backend.  Every translation unit of a program must agree.
#define DIMTENSOR_DEFAULT_BACKEND dimtensor::cpu
#endif

#if defined(DIMTENSOR_DOXYGEN)
/// @brief Defined before the first include of a dimtensor header, the file
/// compiles the CPU backend's float and double code itself instead of
/// calling the copies compiled into the dimtensor::runtime library
/// (DIMTENSOR_EXTERN_INSTANCES): for a file built with other
/// code-generation flags than the library (`-march=native`), or to inline
/// those kernels.
#define DIMTENSOR_NO_EXTERN_INSTANCES
#endif

/// @brief The compiled instances of a header's dims-free code: `list` is a
/// macro `list(how, B, T)` of declarations, each introduced by `how`, for
/// backend B and element type T; this declares them (`extern template`)
/// for the CPU backend's float and double, so that a file calls the copies
/// src/instances/ compiles into dimtensor::runtime (it names the same list
/// in DIMTENSOR_DEFINE_INSTANCES).  Nothing under
/// DIMTENSOR_NO_EXTERN_INSTANCES or nvcc.  Used at a header's end, at
/// namespace dimtensor's scope, the list's names qualified from there.
#if !defined(DIMTENSOR_NO_EXTERN_INSTANCES) && !defined(__CUDACC__)
#define DIMTENSOR_EXTERN_INSTANCES(list)         \
  list(extern template, ::dimtensor::cpu, float) \
  list(extern template, ::dimtensor::cpu, double)
#else
#define DIMTENSOR_EXTERN_INSTANCES(list)
#endif

/// @brief Defines the instances a header lists (see
/// DIMTENSOR_EXTERN_INSTANCES): in src/instances/, after the header.
#define DIMTENSOR_DEFINE_INSTANCES(list) \
  list(template, ::dimtensor::cpu, float) list(template, ::dimtensor::cpu, double)

#if defined(DIMTENSOR_DOXYGEN)
/// @brief 1 when the CPU backend multiplies through a CBLAS (set by the
/// build: the `dimtensor` target carries it when a BLAS was found); unset,
/// the products are portable blocked loops.
#define DIMTENSOR_HAS_CBLAS 1
/// @brief 1 when that BLAS is BLIS (`-DDIMTENSOR_BLAS=BLIS` at configure
/// time; the `dimtensor` target carries it).  backends/cpu/blas.hpp.
#define DIMTENSOR_BLAS_BLIS 1
/// @brief 1 when that BLAS is Intel MKL (`-DDIMTENSOR_BLAS=MKL`; the
/// `dimtensor` target carries it).  Neither this nor DIMTENSOR_BLAS_BLIS:
/// OpenBLAS.
#define DIMTENSOR_BLAS_MKL 1
#endif

// Thrust's generic headers include its device system's; under a host
// compiler that system must not be CUDA.  The Thrust backend names its
// system in every call (thrust_backend<System>), so the C++ system here only
// keeps those headers compiling.  A definition of the user's wins.
#if !defined(__CUDACC__) && !defined(THRUST_DEVICE_SYSTEM)
#define THRUST_DEVICE_SYSTEM THRUST_DEVICE_SYSTEM_CPP
#endif

/// The namespace (inline, in dimtensor::backends::cpu) of the CPU kernels
/// that dimtensor::runtime compiles once for each instruction set it
/// carries (backends/cpu/dispatch.hpp): `isa_here` in a user's file, which
/// compiles them with its own flags only for what the runtime does not
/// carry; isa_baseline, isa_avx2 and isa_avx512 in the runtime's files.
#if !defined(DIMTENSOR_CPU_ISA_NAMESPACE)
#define DIMTENSOR_CPU_ISA_NAMESPACE isa_here
#endif

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
