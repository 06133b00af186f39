#pragma once
/// @file
/// @brief The BLAS the CPU backend multiplies with, chosen when dimtensor
/// is configured (`-DDIMTENSOR_BLAS=OpenBLAS`, the default, `BLIS` or
/// `MKL`): its CBLAS header, its thread control and its name.
///
/// `DIMTENSOR_HAS_CBLAS` is 1 when a BLAS was found; `DIMTENSOR_BLAS_BLIS`
/// or `DIMTENSOR_BLAS_MKL` is 1 when it is BLIS or MKL (config.hpp), and it
/// is OpenBLAS when neither is.  The build sets them (the `dimtensor`
/// target carries them), so every translation unit of a program agrees.
/// Without a BLAS the products are the portable blocked loops of gemm.hpp,
/// and blas_vendor() is "none".

#include <cstdlib>
#include <string>
#include <string_view>

#include <dimtensor/config.hpp>

#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
#if defined(DIMTENSOR_BLAS_MKL) && DIMTENSOR_BLAS_MKL
#include <mkl_cblas.h>
#include <mkl_service.h>
#elif defined(DIMTENSOR_BLAS_BLIS) && DIMTENSOR_BLAS_BLIS
#include <cblas.h>  // BLIS's: also defines dim_t and arch_t
extern "C" {
dim_t bli_thread_get_num_threads(void);
void bli_thread_set_num_threads(dim_t);
char* bli_info_get_version_str(void);
arch_t bli_arch_query_id(void);
char* bli_arch_string(arch_t);
}
#else
#include <cblas.h>  // OpenBLAS's: also declares openblas_set_num_threads & co.
#endif
#endif

namespace dimtensor::backends::cpu {

/// @brief The BLAS the CPU backend was built with: "OpenBLAS", "BLIS",
/// "MKL", or "none" (the portable loops).
constexpr std::string_view blas_vendor() noexcept {
#if !(defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS)
  return "none";
#elif defined(DIMTENSOR_BLAS_MKL) && DIMTENSOR_BLAS_MKL
  return "MKL";
#elif defined(DIMTENSOR_BLAS_BLIS) && DIMTENSOR_BLAS_BLIS
  return "BLIS";
#else
  return "OpenBLAS";
#endif
}

namespace detail {

#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS && defined(DIMTENSOR_BLAS_MKL) && DIMTENSOR_BLAS_MKL
/// Chooses MKL's threading layer once, before dimtensor's first MKL call:
/// GNU OpenMP's when the backend runs on OpenMP (one OpenMP runtime in the
/// program, not Intel's beside it), sequential otherwise.  The
/// MKL_THREADING_LAYER environment variable, when set, wins.
inline void mkl_threading_layer_once() {
  static bool const chosen = [] {
    if (std::getenv("MKL_THREADING_LAYER") == nullptr) {
#if defined(_OPENMP)
      mkl_set_threading_layer(MKL_THREADING_GNU);
#else
      mkl_set_threading_layer(MKL_THREADING_SEQUENTIAL);
#endif
    }
    return true;
  }();
  (void)chosen;
}
#endif

#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
/// The number of threads the BLAS's own products use.
inline int blas_threads() {
#if defined(DIMTENSOR_BLAS_MKL) && DIMTENSOR_BLAS_MKL
  mkl_threading_layer_once();
  return mkl_get_max_threads();
#elif defined(DIMTENSOR_BLAS_BLIS) && DIMTENSOR_BLAS_BLIS
  return static_cast<int>(bli_thread_get_num_threads());
#else
  return openblas_get_num_threads();
#endif
}

/// Sets the number of threads the BLAS's own products use (n > 0).
inline void set_blas_threads(int n) {
#if defined(DIMTENSOR_BLAS_MKL) && DIMTENSOR_BLAS_MKL
  mkl_threading_layer_once();
  mkl_set_num_threads(n);
#elif defined(DIMTENSOR_BLAS_BLIS) && DIMTENSOR_BLAS_BLIS
  bli_thread_set_num_threads(static_cast<dim_t>(n));
#else
  openblas_set_num_threads(n);
#endif
}

/// Sets the BLAS to one thread (the backend's OpenMP threads share the
/// products instead; see gemm.hpp), cheaply when it already is.
inline void single_threaded_blas() {
  if (blas_threads() != 1) set_blas_threads(1);
}
#else
inline void set_blas_threads(int) {}
inline void single_threaded_blas() {}
#endif

}  // namespace detail

/// @brief The BLAS with its version and the kernel it picked for this CPU,
/// as the library reports them at run time, e.g. "OpenBLAS 0.3.21
/// (kernel Cooperlake)", "BLIS 0.9.0 (kernel skx)", "MKL (Intel(R) oneAPI
/// Math Kernel Library Version 2024.2 …)"; "none (portable loops)"
/// without a BLAS.  The benchmarks print it.
inline std::string blas_description() {
#if !(defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS)
  return "none (portable loops)";
#elif defined(DIMTENSOR_BLAS_MKL) && DIMTENSOR_BLAS_MKL
  detail::mkl_threading_layer_once();
  char version[256] = {};
  mkl_get_version_string(version, static_cast<int>(sizeof version));
  return std::string("MKL (") + version + ")";
#elif defined(DIMTENSOR_BLAS_BLIS) && DIMTENSOR_BLAS_BLIS
  return std::string("BLIS ") + bli_info_get_version_str() + " (kernel " + bli_arch_string(bli_arch_query_id()) + ")";
#else
  // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY <core> MAX_THREADS=64".
  std::string config = openblas_get_config();
  std::string version = config.substr(0, config.find(' ', config.find(' ') + 1));
  return version + " (kernel " + openblas_get_corename() + ")";
#endif
}

}  // namespace dimtensor::backends::cpu
