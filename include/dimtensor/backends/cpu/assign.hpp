#pragma once
/// @file
/// @brief The CPU backend's one elementwise loop: evaluate an expression
/// into a contiguous buffer, in one fused pass.

#include <array>
#include <cstddef>

#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/shape.hpp>

namespace dimtensor {

/// Writes the expression read through evaluator @p ev into @p dst, a
/// row-major buffer of extents @p ext.
template <class T, std::size_t R, class Ev>
void backend_assign(cpu, T* dst, std::array<index_t, R> const& ext, Ev const& ev) {
  index_t const n = detail::element_count(ext);
  if (n == 0) return;
  if constexpr (R == 0) {
    dst[0] = static_cast<T>(ev.at_flat(0));
  } else {
    if (ev.flat()) {
      backends::cpu::parallel_for(n, 1, [&](index_t begin, index_t end) {
        Ev const local = ev;
        DIMTENSOR_SIMD
        for (index_t i = begin; i < end; ++i) dst[i] = static_cast<T>(local.at_flat(i));
      });
      return;
    }
    index_t const inner = ext[R - 1];
    index_t const rows = n / inner;
    backends::cpu::parallel_for(rows, inner, [&](index_t begin, index_t end) {
      Ev local = ev;
      std::array<index_t, (R > 1 ? R - 1 : 1)> idx{};
      index_t rem = begin;
      for (std::size_t d = R - 1; d-- > 0;) {
        idx[d] = rem % ext[d];
        rem /= ext[d];
      }
      for (index_t r = begin; r < end; ++r) {
        local.row(idx.data());
        T* out = dst + r * inner;
        DIMTENSOR_SIMD
        for (index_t j = 0; j < inner; ++j) out[j] = static_cast<T>(local.at(j));
        for (std::size_t d = R - 1; d-- > 0;) {
          if (++idx[d] < ext[d]) break;
          idx[d] = 0;
        }
      }
    });
  }
}

/// Copies @p n elements.
template <class T>
void backend_copy(cpu, T* dst, T const* src, index_t n) {
  backends::cpu::parallel_for(n, 1, [&](index_t begin, index_t end) {
    DIMTENSOR_SIMD
    for (index_t i = begin; i < end; ++i) dst[i] = src[i];
  });
}

/// Writes @p v to @p n elements.
template <class T>
void backend_fill(cpu, T* dst, index_t n, T v) {
  backends::cpu::parallel_for(n, 1, [&](index_t begin, index_t end) {
    T* const d = dst;
    T const x = v;
    DIMTENSOR_SIMD
    for (index_t i = begin; i < end; ++i) d[i] = x;
  });
}

/// Runs `f(i)` for every i in [0, n), in threads; @p f is a function object
/// callable on host and device (the same code serves the Thrust backend).
template <class F>
void backend_for_each(cpu, index_t n, F const& f) {
  backends::cpu::parallel_for(n, 1, [&](index_t begin, index_t end) {
    for (index_t i = begin; i < end; ++i) f(i);
  });
}

/// Copies @p n elements from host memory (the CPU backend's own).
template <class T>
void backend_copy_from_host(cpu, T* dst, T const* src, index_t n) {
  backend_copy(cpu{}, dst, src, n);
}

/// Copies @p n elements to host memory (the CPU backend's own).
template <class T>
void backend_copy_to_host(cpu, T* dst, T const* src, index_t n) {
  backend_copy(cpu{}, dst, src, n);
}

}  // namespace dimtensor
