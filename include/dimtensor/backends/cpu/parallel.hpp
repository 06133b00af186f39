#pragma once
/// @file
/// @brief Threads of the CPU backend: how many, and the parallel loop.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <dimtensor/backends/cpu/blas.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>

namespace dimtensor {

namespace backends::cpu {
/// Below this many elements of work, loops run on one thread.
inline constexpr index_t parallel_grain = 32768;

/// The thread count last given to set_num_threads (0: the default).
inline int& thread_setting() {
  static int n = 0;  // 0: the OpenMP default
  return n;
}

/// Runs fn(begin, end) over [0, n) in contiguous chunks, one per thread,
/// when the work (n * cost elements) is large enough to pay for threads.
template <class Fn>
void parallel_for(index_t n, index_t cost, Fn&& fn) {
#if defined(_OPENMP)
  if (n > 1 && n * cost >= parallel_grain && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
    {
      index_t const threads = omp_get_num_threads();
      index_t const t = omp_get_thread_num();
      index_t const chunk = (n + threads - 1) / threads;
      index_t const begin = std::min(n, t * chunk);
      index_t const end = std::min(n, begin + chunk);
      if (begin < end) fn(begin, end);
    }
    return;
  }
#else
  (void)cost;
#endif
  if (n > 0) fn(index_t{0}, n);
}

/// Runs fn(state, i) for every i in [0, n), the threads taking the next i
/// as each finishes its last (items of uneven work balance out; give the
/// heaviest first), with one `state = make()` per thread (scratch buffers).
/// On one thread when the work (n * cost elements) is too small to pay
/// for threads.  fn must not throw.
template <class Make, class Fn>
void parallel_for_dynamic(index_t n, index_t cost, Make&& make, Fn&& fn) {
#if defined(_OPENMP)
  if (n > 1 && n * cost >= parallel_grain && omp_get_max_threads() > 1 && !omp_in_parallel()) {
    std::atomic<index_t> next{0};
#pragma omp parallel
    {
      auto state = make();
      for (index_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
           i = next.fetch_add(1, std::memory_order_relaxed))
        fn(state, i);
    }
    return;
  }
#else
  (void)cost;
#endif
  if (n <= 0) return;
  auto state = make();
  for (index_t i = 0; i < n; ++i) fn(state, i);
}
}  // namespace backends::cpu

/// The most threads set_num_threads accepts.
inline constexpr int max_num_threads = 1024;

/// @brief Sets the number of threads the CPU backend uses (OpenMP and the
/// BLAS); 0 restores the default.  A count below 0 or above
/// max_num_threads (or OpenMP's thread limit) is a `value_error`, and
/// nothing changes.
inline void set_num_threads(int n) {
  int limit = max_num_threads;
#if defined(_OPENMP)
  limit = std::min(limit, omp_get_thread_limit());
#endif
  if (n < 0 || n > limit) {
    throw value_error("set_num_threads: " + std::to_string(n) + " threads requested; the CPU backend takes 1 to " +
                      std::to_string(limit) + ", or 0 for the default");
  }
  backends::cpu::thread_setting() = n;
#if defined(_OPENMP)
  static int const default_threads = omp_get_max_threads();
  omp_set_num_threads(n > 0 ? n : default_threads);
#endif
  if (n > 0) backends::cpu::detail::set_blas_threads(n);
}

/// The number of threads the CPU backend uses now.
inline int get_num_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace dimtensor
