#pragma once
/// @file
/// @brief The CPU backend's softmax family along one dim: softmax,
/// log_softmax, masked softmax (d2l's semantics) and the sequence mask,
/// over a row-major input viewed as [outer, n, inner], the dim in the middle,
/// and their backward passes (from the result and its gradient).
///
/// Every kernel is numerically stable (it subtracts the maximum along the
/// dim) and makes one sweep set per row without a masked copy of the input:
/// the mask is applied as the elements are read.  Where the dim is the last
/// one (inner == 1) the loops run along the row; otherwise they run over
/// `inner`, which is contiguous, with per-position maxima and sums.  Both
/// vectorize (float exp is kernel/math.hpp's branch-free one).  Threads split
/// the outer rows.
///
/// Valid lengths: the length of the row at (o, i) is `lengths[(o * inner + i) / repeat]`,
/// i.e. one length per `repeat` consecutive rows — how a valid_lens tensor
/// whose dims lead the dims without the masked one broadcasts over the rest.

/// Defined once the header is included (src/cpu/kernels.inl checks the order).
#define DIMTENSOR_BACKENDS_CPU_SOFTMAX_HPP 1

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <dimtensor/backends/cpu/dispatch.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/reduce.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/math.hpp>

namespace dimtensor {

namespace backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {

/// @brief Calls `f(0) … f(n-1)`, as a vectorized loop when @p Vectorize.
///
/// Loops over exp ask for vectorization only for float, whose exp is
/// branch-free (kernel/math.hpp): exp of double is a libm call, and asking
/// for a vectorized loop over it makes clang warn that it cannot.
template <bool Vectorize, class F>
inline void for_each_index(index_t n, F const& f) {
  if constexpr (Vectorize) {
    DIMTENSOR_SIMD
    for (index_t i = 0; i < n; ++i) f(i);
  } else {
    for (index_t i = 0; i < n; ++i) f(i);
  }
}

/// `x[i]`, or @p masked_value when Masked and `j >= len[i]`.  The element is
/// read unconditionally (it exists): a conditional load blocks vectorization.
template <bool Masked, class T>
inline T read_masked(T const* x, index_t i, index_t j, index_t const* len, T masked_value) {
  if constexpr (Masked) {
    T const v = x[i];
    return j < len[i] ? v : masked_value;
  } else {
    (void)j;
    (void)len;
    (void)masked_value;
    return x[i];
  }
}

/// @brief Rows [begin, end) of softmax_rows.
///
/// A function of values rather than a lambda over captures: a store through
/// `out` could alias a captured variable of the same type (the masked
/// value), which would keep the compiler from vectorizing.
template <bool Log, class L, class T>
void softmax_chunk(index_t begin, index_t end, T const* in, T* out, index_t n, index_t inner, L const* lengths,
                   index_t repeat, T masked_value) {
  static constexpr bool masked = !std::is_void_v<L>;
  static constexpr bool vector_exp = std::is_same_v<T, float>;
  if (inner == 1) {
    for (index_t o = begin; o < end; ++o) {
      T const* x = in + o * n;
      T* y = out + o * n;
      index_t len = n;
      if constexpr (masked) len = static_cast<index_t>(lengths[o / repeat]);
      auto load = [x, len, masked_value](index_t j) -> T {
        if constexpr (masked) {
          T const v = x[j];  // read unconditionally: a conditional load blocks vectorization
          return j < len ? v : masked_value;
        } else {
          (void)len;
          (void)masked_value;
          return x[j];
        }
      };
      T const m = lane_max<T>(n, lowest_value<T>(), load);
      auto plus = [](T a, T b) { return a + b; };
      if constexpr (Log) {
        T const s = lane_fold<T>(n, T(0), [=](index_t j) { return math::exp(load(j) - m); }, plus);
        T const log_s = std::log(s);
        DIMTENSOR_SIMD
        for (index_t j = 0; j < n; ++j) y[j] = (load(j) - m) - log_s;
      } else {
        for_each_index<vector_exp>(n, [=](index_t j) { y[j] = math::exp(load(j) - m); });
        T const inv = T(1) / lane_fold<T>(n, T(0), [y](index_t j) { return y[j]; }, plus);
        DIMTENSOR_SIMD
        for (index_t j = 0; j < n; ++j) y[j] *= inv;
      }
    }
    return;
  }
  std::vector<T> max_buf(static_cast<std::size_t>(inner));
  std::vector<T> sum_buf(static_cast<std::size_t>(inner));
  std::vector<index_t> len_buf(masked ? static_cast<std::size_t>(inner) : 0);
  T* m = max_buf.data();
  T* s = sum_buf.data();
  index_t* len = len_buf.data();
  for (index_t o = begin; o < end; ++o) {
    T const* x0 = in + o * n * inner;
    T* y0 = out + o * n * inner;
    if constexpr (masked) {
      for (index_t i = 0; i < inner; ++i) len[i] = static_cast<index_t>(lengths[(o * inner + i) / repeat]);
    }
    for (index_t i = 0; i < inner; ++i) {
      m[i] = lowest_value<T>();
      s[i] = T(0);
    }
    for (index_t j = 0; j < n; ++j) {
      T const* x = x0 + j * inner;
      DIMTENSOR_SIMD
      for (index_t i = 0; i < inner; ++i) m[i] = max_keep_nan(m[i], read_masked<masked>(x, i, j, len, masked_value));
    }
    if constexpr (Log) {
      for (index_t j = 0; j < n; ++j) {
        T const* x = x0 + j * inner;
        for_each_index<vector_exp>(inner, [=](index_t i) {
          s[i] += math::exp(read_masked<masked>(x, i, j, len, masked_value) - m[i]);
        });
      }
      for (index_t i = 0; i < inner; ++i) s[i] = std::log(s[i]);
      for (index_t j = 0; j < n; ++j) {
        T const* x = x0 + j * inner;
        T* y = y0 + j * inner;
        DIMTENSOR_SIMD
        for (index_t i = 0; i < inner; ++i) y[i] = (read_masked<masked>(x, i, j, len, masked_value) - m[i]) - s[i];
      }
    } else {
      for (index_t j = 0; j < n; ++j) {
        T const* x = x0 + j * inner;
        T* y = y0 + j * inner;
        for_each_index<vector_exp>(inner, [=](index_t i) {
          T const e = math::exp(read_masked<masked>(x, i, j, len, masked_value) - m[i]);
          y[i] = e;
          s[i] += e;
        });
      }
      for (index_t i = 0; i < inner; ++i) s[i] = T(1) / s[i];
      for (index_t j = 0; j < n; ++j) {
        T* y = y0 + j * inner;
        DIMTENSOR_SIMD
        for (index_t i = 0; i < inner; ++i) y[i] *= s[i];
      }
    }
  }
}

/// @brief The common loop of softmax, log_softmax and the masked softmax.
///
/// With L = void nothing is masked; otherwise the element at index j along
/// the dim of a row of length len reads as @p masked_value when j >= len.
template <bool Log, class L, class T>
void softmax_rows(T const* in, T* out, index_t outer, index_t n, index_t inner, L const* lengths, index_t repeat,
                  T masked_value) {
  if (outer == 0 || n == 0 || inner == 0) return;
  parallel_for(outer, n * inner, [=](index_t begin, index_t end) {
    softmax_chunk<Log, L>(begin, end, in, out, n, inner, lengths, repeat, masked_value);
  });
}

/// @brief Rows [begin, end) of softmax_backward_rows.
///
/// A function of values, as softmax_chunk.  Softmax: dx = y (g - sum_D(g y));
/// log_softmax: dx = g - exp(y) sum_D(g).  With lengths (L not void), dx is 0
/// at index >= the row's valid length: those inputs were replaced by a
/// constant before the softmax, so nothing flows back to them.
template <bool Log, class L, class T>
void softmax_backward_chunk(index_t begin, index_t end, T const* y, T const* g, T* dx, index_t n, index_t inner,
                            L const* lengths, index_t repeat) {
  static constexpr bool masked = !std::is_void_v<L>;
  static constexpr bool vector_exp = std::is_same_v<T, float>;
  auto plus = [](T a, T b) { return a + b; };
  if (inner == 1) {
    for (index_t o = begin; o < end; ++o) {
      T const* yr = y + o * n;
      T const* gr = g + o * n;
      T* d = dx + o * n;
      if constexpr (Log) {
        T const s = lane_fold<T>(n, T(0), [gr](index_t j) { return gr[j]; }, plus);
        for_each_index<vector_exp>(n, [=](index_t j) { d[j] = gr[j] - math::exp(yr[j]) * s; });
      } else {
        T const s = lane_fold<T>(n, T(0), [gr, yr](index_t j) { return gr[j] * yr[j]; }, plus);
        DIMTENSOR_SIMD
        for (index_t j = 0; j < n; ++j) d[j] = yr[j] * (gr[j] - s);
      }
      if constexpr (masked) {
        for (index_t j = static_cast<index_t>(lengths[o / repeat]); j < n; ++j) d[j] = T(0);
      }
    }
    return;
  }
  std::vector<T> sum_buf(static_cast<std::size_t>(inner));
  std::vector<index_t> len_buf(masked ? static_cast<std::size_t>(inner) : 0);
  T* s = sum_buf.data();
  index_t* len = len_buf.data();
  for (index_t o = begin; o < end; ++o) {
    T const* y0 = y + o * n * inner;
    T const* g0 = g + o * n * inner;
    T* d0 = dx + o * n * inner;
    if constexpr (masked) {
      for (index_t i = 0; i < inner; ++i) len[i] = static_cast<index_t>(lengths[(o * inner + i) / repeat]);
    }
    for (index_t i = 0; i < inner; ++i) s[i] = T(0);
    for (index_t j = 0; j < n; ++j) {
      T const* yr = y0 + j * inner;
      T const* gr = g0 + j * inner;
      if constexpr (Log) {
        (void)yr;
        DIMTENSOR_SIMD
        for (index_t i = 0; i < inner; ++i) s[i] += gr[i];
      } else {
        DIMTENSOR_SIMD
        for (index_t i = 0; i < inner; ++i) s[i] += gr[i] * yr[i];
      }
    }
    for (index_t j = 0; j < n; ++j) {
      T const* yr = y0 + j * inner;
      T const* gr = g0 + j * inner;
      T* d = d0 + j * inner;
      if constexpr (Log) {
        for_each_index<vector_exp>(inner, [=](index_t i) { d[i] = gr[i] - math::exp(yr[i]) * s[i]; });
      } else {
        DIMTENSOR_SIMD
        for (index_t i = 0; i < inner; ++i) d[i] = yr[i] * (gr[i] - s[i]);
      }
      if constexpr (masked) {
        DIMTENSOR_SIMD
        for (index_t i = 0; i < inner; ++i) d[i] = j < len[i] ? d[i] : T(0);
      }
    }
  }
}

/// @brief The common loop of the backward passes of softmax, log_softmax
/// and the masked softmax: from the result @p y and its gradient @p g to the
/// input's gradient @p dx, all [outer, n, inner].  Lengths as in softmax_rows.
template <bool Log, class L, class T>
void softmax_backward_rows(T const* y, T const* g, T* dx, index_t outer, index_t n, index_t inner, L const* lengths,
                           index_t repeat) {
  if (outer == 0 || n == 0 || inner == 0) return;
  parallel_for(outer, n * inner, [=](index_t begin, index_t end) {
    softmax_backward_chunk<Log, L>(begin, end, y, g, dx, n, inner, lengths, repeat);
  });
}

/// Rows [begin, end) of backend_sequence_mask (a function of values, as softmax_chunk).
template <class T, class L>
void sequence_mask_chunk(index_t begin, index_t end, T const* in, T* out, index_t n, index_t inner, L const* lengths,
                         index_t repeat, T value) {
  if (inner == 1) {
    for (index_t o = begin; o < end; ++o) {
      index_t const len = static_cast<index_t>(lengths[o / repeat]);
      T const* x = in + o * n;
      T* y = out + o * n;
      DIMTENSOR_SIMD
      for (index_t j = 0; j < n; ++j) {
        T const v = x[j];
        y[j] = j < len ? v : value;
      }
    }
    return;
  }
  std::vector<index_t> len_buf(static_cast<std::size_t>(inner));
  index_t* len = len_buf.data();
  for (index_t o = begin; o < end; ++o) {
    for (index_t i = 0; i < inner; ++i) len[i] = static_cast<index_t>(lengths[(o * inner + i) / repeat]);
    for (index_t j = 0; j < n; ++j) {
      T const* x = in + (o * n + j) * inner;
      T* y = out + (o * n + j) * inner;
      DIMTENSOR_SIMD
      for (index_t i = 0; i < inner; ++i) {
        T const v = x[i];
        y[i] = j < len[i] ? v : value;
      }
    }
  }
}

}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace backends::cpu

/// @brief Softmax along the middle dim of the row-major [outer, n, inner]
/// input @p in, into @p out of the same layout.
template <class T>
void backend_softmax(cpu, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  if constexpr (backends::cpu::has_level_kernels<T>) {
    backends::cpu::kernels<T>().softmax(in, out, outer, n, inner);
  } else {
    backends::cpu::softmax_rows<false, void>(in, out, outer, n, inner, nullptr, 1, T(0));
  }
}

/// @brief log_softmax along the middle dim of [outer, n, inner]:
/// `x - max - log(sum(exp(x - max)))`.
template <class T>
void backend_log_softmax(cpu, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  if constexpr (backends::cpu::has_level_kernels<T>) {
    backends::cpu::kernels<T>().log_softmax(in, out, outer, n, inner);
  } else {
    backends::cpu::softmax_rows<true, void>(in, out, outer, n, inner, nullptr, 1, T(0));
  }
}

/// @brief Softmax along the middle dim of [outer, n, inner] after replacing
/// the elements at index >= the row's valid length by @p masked_value
/// (d2l's masked_softmax uses -1e6), without writing the masked input.
///
/// The row at (o, i) has the length `lengths[(o * inner + i) / repeat]`;
/// the lengths must already be checked to lie in [0, n]
/// (backend_first_invalid_length).
template <class T, class L>
void backend_masked_softmax(cpu, T const* in, T* out, index_t outer, index_t n, index_t inner, L const* lengths,
                            index_t repeat, T masked_value) {
  if constexpr (backends::cpu::has_level_kernels<T> && std::is_same_v<L, std::int32_t>) {
    backends::cpu::kernels<T>().masked_softmax_i32(in, out, outer, n, inner, lengths, repeat, masked_value);
  } else if constexpr (backends::cpu::has_level_kernels<T> && std::is_same_v<L, std::int64_t>) {
    backends::cpu::kernels<T>().masked_softmax_i64(in, out, outer, n, inner, lengths, repeat, masked_value);
  } else {
    backends::cpu::softmax_rows<false, L>(in, out, outer, n, inner, lengths, repeat, masked_value);
  }
}

/// @brief The gradient @p dx of softmax's input along the middle dim of
/// [outer, n, inner], from its result @p y and the result's gradient @p g:
/// `dx = y * (g - sum_D(g * y))`.
template <class T>
void backend_softmax_backward(cpu, T const* y, T const* g, T* dx, index_t outer, index_t n, index_t inner) {
  if constexpr (backends::cpu::has_level_kernels<T>) {
    backends::cpu::kernels<T>().softmax_backward(y, g, dx, outer, n, inner);
  } else {
    backends::cpu::softmax_backward_rows<false, void>(y, g, dx, outer, n, inner, nullptr, 1);
  }
}

/// @brief The gradient @p dx of log_softmax's input along the middle dim of
/// [outer, n, inner], from its result @p y and the result's gradient @p g:
/// `dx = g - exp(y) * sum_D(g)`.
template <class T>
void backend_log_softmax_backward(cpu, T const* y, T const* g, T* dx, index_t outer, index_t n, index_t inner) {
  if constexpr (backends::cpu::has_level_kernels<T>) {
    backends::cpu::kernels<T>().log_softmax_backward(y, g, dx, outer, n, inner);
  } else {
    backends::cpu::softmax_backward_rows<true, void>(y, g, dx, outer, n, inner, nullptr, 1);
  }
}

/// @brief The gradient @p dx of the masked softmax's scores: softmax's
/// backward on the result @p y, and 0 at index >= the row's valid length
/// (those scores were replaced by a constant).  Lengths as for
/// backend_masked_softmax.
template <class T, class L>
void backend_masked_softmax_backward(cpu, T const* y, T const* g, T* dx, index_t outer, index_t n, index_t inner,
                                     L const* lengths, index_t repeat) {
  if constexpr (backends::cpu::has_level_kernels<T> && std::is_same_v<L, std::int32_t>) {
    backends::cpu::kernels<T>().masked_softmax_backward_i32(y, g, dx, outer, n, inner, lengths, repeat);
  } else if constexpr (backends::cpu::has_level_kernels<T> && std::is_same_v<L, std::int64_t>) {
    backends::cpu::kernels<T>().masked_softmax_backward_i64(y, g, dx, outer, n, inner, lengths, repeat);
  } else {
    backends::cpu::softmax_backward_rows<false, L>(y, g, dx, outer, n, inner, lengths, repeat);
  }
}

/// @brief Copies [outer, n, inner] with the elements at index >= the row's
/// valid length along the middle dim set to @p value (d2l's sequence_mask).
///
/// Lengths as for backend_masked_softmax.
template <class T, class L>
void backend_sequence_mask(cpu, T const* in, T* out, index_t outer, index_t n, index_t inner, L const* lengths,
                           index_t repeat, T value) {
  if (outer == 0 || n == 0 || inner == 0) return;
  backends::cpu::parallel_for(outer, n * inner, [=](index_t begin, index_t end) {
    backends::cpu::sequence_mask_chunk(begin, end, in, out, n, inner, lengths, repeat, value);
  });
}

/// The position of the first of @p count lengths outside [0, @p limit], or -1.
template <class L>
index_t backend_first_invalid_length(cpu, L const* lengths, index_t count, index_t limit) {
  for (index_t k = 0; k < count; ++k) {
    auto const len = static_cast<index_t>(lengths[k]);
    if (len < 0 || len > limit) return k;
  }
  return -1;
}

}  // namespace dimtensor
