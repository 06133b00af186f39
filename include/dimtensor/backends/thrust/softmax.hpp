#pragma once
/// @file
/// @brief The Thrust backend's softmax family along one dim: softmax,
/// log_softmax, masked softmax (d2l's semantics) and the sequence mask,
/// over a row-major input viewed as [outer, n, inner], the dim in the middle,
/// and their backward passes (from the result and its gradient).
///
/// One thread per line (one (outer, inner) position walking its n elements
/// with stride inner), as the reductions: numerically stable (the maximum
/// along the line is subtracted) and without a masked copy of the input.
///
/// Valid lengths: the length of the row at (o, i) is `lengths[(o * inner + i) / repeat]`,
/// i.e. one length per `repeat` consecutive rows — how a valid_lens tensor
/// whose dims lead the dims without the masked one broadcasts over the rest.

#include <cmath>
#include <type_traits>

#include <dimtensor/backends/thrust/assign.hpp>
#include <dimtensor/backends/thrust/reduce.hpp>
#include <dimtensor/backends/thrust/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/math.hpp>

#include <thrust/find.h>
#include <thrust/iterator/counting_iterator.h>

namespace dimtensor {

namespace backends::thrust {

/// The valid length of line @p line: n without lengths (L void), else
/// `lengths[line / repeat]`.
template <class L>
DIMTENSOR_HOST_DEVICE inline index_t line_length(L const* lengths, index_t line, index_t repeat, index_t n) {
  if constexpr (std::is_void_v<L>) {
    (void)lengths;
    (void)line;
    (void)repeat;
    return n;
  } else {
    return static_cast<index_t>(lengths[line / repeat]);
  }
}

/// @brief One line of softmax (Log false) or log_softmax (Log true); with L
/// not void, the element at index j >= the line's length reads as
/// `masked_value`.
template <bool Log, class L, class T>
struct softmax_line {
  T const* in;       ///< The [outer, n, inner] input.
  T* out;            ///< The [outer, n, inner] output.
  index_t n;         ///< The extent of the dim.
  index_t inner;     ///< The product of the extents after it.
  L const* lengths;  ///< One valid length per `repeat` lines (L void: none).
  index_t repeat;    ///< Lines per length.
  T masked_value;    ///< What an element past the valid length reads as.

  /// Element j of the line at x, masked past @p len.
  DIMTENSOR_HOST_DEVICE T load(T const* x, index_t j, index_t len) const {
    T const v = x[j * inner];
    return j < len ? v : masked_value;
  }

  /// Computes line @p line (= o * inner + i).
  DIMTENSOR_HOST_DEVICE void operator()(index_t line) const {
    index_t const o = line / inner;
    index_t const i = line - o * inner;
    index_t const base = o * n * inner + i;
    T const* x = in + base;
    T* y = out + base;
    index_t const len = line_length<L>(lengths, line, repeat, n);
    T m = load(x, 0, len);  // n > 0: the first element starts the maximum (max_op keeps a NaN)
    for (index_t j = 1; j < n; ++j) m = max_op{}(m, load(x, j, len));
    T s = T(0);
    if constexpr (Log) {
      for (index_t j = 0; j < n; ++j) s += math::exp(load(x, j, len) - m);
      T const log_s = std::log(s);
      for (index_t j = 0; j < n; ++j) y[j * inner] = (load(x, j, len) - m) - log_s;
    } else {
      for (index_t j = 0; j < n; ++j) {
        T const e = math::exp(load(x, j, len) - m);
        y[j * inner] = e;
        s += e;
      }
      T const inv = T(1) / s;
      for (index_t j = 0; j < n; ++j) y[j * inner] *= inv;
    }
  }
};

/// @brief One line of the backward pass of softmax (`dx = y (g - sum(g y))`)
/// or log_softmax (`dx = g - exp(y) sum(g)`); with L not void, dx is 0 at
/// index >= the line's valid length.
template <bool Log, class L, class T>
struct softmax_backward_line {
  T const* y;        ///< The [outer, n, inner] result.
  T const* g;        ///< The [outer, n, inner] gradient of the result.
  T* dx;             ///< The [outer, n, inner] gradient of the input.
  index_t n;         ///< The extent of the dim.
  index_t inner;     ///< The product of the extents after it.
  L const* lengths;  ///< One valid length per `repeat` lines (L void: none).
  index_t repeat;    ///< Lines per length.

  /// Computes line @p line (= o * inner + i).
  DIMTENSOR_HOST_DEVICE void operator()(index_t line) const {
    index_t const o = line / inner;
    index_t const i = line - o * inner;
    index_t const base = o * n * inner + i;
    T const* yr = y + base;
    T const* gr = g + base;
    T* d = dx + base;
    index_t const len = line_length<L>(lengths, line, repeat, n);
    T s = T(0);
    for (index_t j = 0; j < n; ++j) {
      if constexpr (Log) {
        s += gr[j * inner];
      } else {
        s += gr[j * inner] * yr[j * inner];
      }
    }
    for (index_t j = 0; j < n; ++j) {
      index_t const k = j * inner;
      T v;
      if constexpr (Log) {
        v = gr[k] - math::exp(yr[k]) * s;
      } else {
        v = yr[k] * (gr[k] - s);
      }
      d[k] = j < len ? v : T(0);
    }
  }
};

/// One element of the sequence mask: the input, or `value` at index >= the
/// row's valid length.
template <class T, class L>
struct sequence_mask_element {
  T const* in;       ///< The [outer, n, inner] input.
  T* out;            ///< The [outer, n, inner] output.
  index_t n;         ///< The extent of the masked dim.
  index_t inner;     ///< The product of the extents after it.
  L const* lengths;  ///< One valid length per `repeat` rows.
  index_t repeat;    ///< Rows per length.
  T value;           ///< What replaces the elements past the valid length.

  /// Writes flat element @p e of the output.
  DIMTENSOR_HOST_DEVICE void operator()(index_t e) const {
    index_t const i = e % inner;
    index_t const r = e / inner;  // o * n + j
    index_t const o = r / n;
    index_t const j = r - o * n;
    index_t const len = static_cast<index_t>(lengths[(o * inner + i) / repeat]);
    T const v = in[e];
    out[e] = j < len ? v : value;
  }
};

/// Whether length k lies outside [0, limit] (a predicate for find_if).
template <class L>
struct length_out_of_range {
  L const* lengths;  ///< The lengths.
  index_t limit;     ///< The largest valid length.
  /// Whether length @p k is invalid.
  DIMTENSOR_HOST_DEVICE bool operator()(index_t k) const {
    auto const len = static_cast<index_t>(lengths[k]);
    return len < 0 || len > limit;
  }
};

/// @brief Runs softmax_line over the outer * inner lines.
template <class Backend, bool Log, class L, class T>
void softmax_lines(T const* in, T* out, index_t outer, index_t n, index_t inner, L const* lengths, index_t repeat,
                   T masked_value) {
  if (outer == 0 || n == 0 || inner == 0) return;
  for_each_index<Backend>(outer * inner,
                          softmax_line<Log, L, T>{in, out, n, inner, lengths, repeat, masked_value});
}

/// @brief Runs softmax_backward_line over the outer * inner lines.
template <class Backend, bool Log, class L, class T>
void softmax_backward_lines(T const* y, T const* g, T* dx, index_t outer, index_t n, index_t inner,
                            L const* lengths, index_t repeat) {
  if (outer == 0 || n == 0 || inner == 0) return;
  for_each_index<Backend>(outer * inner, softmax_backward_line<Log, L, T>{y, g, dx, n, inner, lengths, repeat});
}

}  // namespace backends::thrust

/// @brief Softmax along the middle dim of the row-major [outer, n, inner]
/// input @p in, into @p out of the same layout.
template <class System, class T>
void backend_softmax(thrust_backend<System>, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  backends::thrust::softmax_lines<thrust_backend<System>, false, void>(in, out, outer, n, inner, nullptr, 1, T(0));
}

/// @brief log_softmax along the middle dim of [outer, n, inner]:
/// `x - max - log(sum(exp(x - max)))`.
template <class System, class T>
void backend_log_softmax(thrust_backend<System>, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  backends::thrust::softmax_lines<thrust_backend<System>, true, void>(in, out, outer, n, inner, nullptr, 1, T(0));
}

/// @brief Softmax along the middle dim of [outer, n, inner] after replacing
/// the elements at index >= the row's valid length by @p masked_value
/// (d2l's masked_softmax uses -1e6), without writing the masked input.
///
/// The row at (o, i) has the length `lengths[(o * inner + i) / repeat]`;
/// the lengths must already be checked to lie in [0, n]
/// (backend_first_invalid_length).
template <class System, class T, class L>
void backend_masked_softmax(thrust_backend<System>, T const* in, T* out, index_t outer, index_t n, index_t inner,
                            L const* lengths, index_t repeat, T masked_value) {
  backends::thrust::softmax_lines<thrust_backend<System>, false, L>(in, out, outer, n, inner, lengths, repeat,
                                                                    masked_value);
}

/// @brief The gradient @p dx of softmax's input along the middle dim of
/// [outer, n, inner], from its result @p y and the result's gradient @p g:
/// `dx = y * (g - sum_D(g * y))`.
template <class System, class T>
void backend_softmax_backward(thrust_backend<System>, T const* y, T const* g, T* dx, index_t outer, index_t n,
                              index_t inner) {
  backends::thrust::softmax_backward_lines<thrust_backend<System>, false, void>(y, g, dx, outer, n, inner, nullptr,
                                                                               1);
}

/// @brief The gradient @p dx of log_softmax's input along the middle dim of
/// [outer, n, inner], from its result @p y and the result's gradient @p g:
/// `dx = g - exp(y) * sum_D(g)`.
template <class System, class T>
void backend_log_softmax_backward(thrust_backend<System>, T const* y, T const* g, T* dx, index_t outer, index_t n,
                                  index_t inner) {
  backends::thrust::softmax_backward_lines<thrust_backend<System>, true, void>(y, g, dx, outer, n, inner, nullptr,
                                                                              1);
}

/// @brief The gradient @p dx of the masked softmax's scores: softmax's
/// backward on the result @p y, and 0 at index >= the row's valid length
/// (those scores were replaced by a constant).  Lengths as for
/// backend_masked_softmax.
template <class System, class T, class L>
void backend_masked_softmax_backward(thrust_backend<System>, T const* y, T const* g, T* dx, index_t outer, index_t n,
                                     index_t inner, L const* lengths, index_t repeat) {
  backends::thrust::softmax_backward_lines<thrust_backend<System>, false, L>(y, g, dx, outer, n, inner, lengths,
                                                                             repeat);
}

/// @brief Copies [outer, n, inner] with the elements at index >= the row's
/// valid length along the middle dim set to @p value (d2l's sequence_mask).
///
/// Lengths as for backend_masked_softmax.
template <class System, class T, class L>
void backend_sequence_mask(thrust_backend<System>, T const* in, T* out, index_t outer, index_t n, index_t inner,
                           L const* lengths, index_t repeat, T value) {
  if (outer == 0 || n == 0 || inner == 0) return;
  backends::thrust::for_each_index<thrust_backend<System>>(
      outer * n * inner, backends::thrust::sequence_mask_element<T, L>{in, out, n, inner, lengths, repeat, value});
}

/// The position of the first of @p count lengths outside [0, @p limit], or -1.
template <class System, class L>
index_t backend_first_invalid_length(thrust_backend<System>, L const* lengths, index_t count, index_t limit) {
  if (count <= 0) return -1;
  ::thrust::counting_iterator<index_t> const first(0);
  auto const hit = ::thrust::find_if(thrust_backend<System>::policy(), first, first + count,
                                     backends::thrust::length_out_of_range<L>{lengths, limit});
  index_t const k = static_cast<index_t>(hit - first);
  return k < count ? k : -1;
}

}  // namespace dimtensor
