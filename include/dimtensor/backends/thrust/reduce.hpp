#pragma once
/// @file
/// @brief The Thrust backend's reductions along one dim: sum, mean, max, min
/// and argmax over a row-major input viewed as [outer, n, inner], the
/// reduced dim in the middle, and the backward passes of max and min.
///
/// One thread per line, a line being one (outer, inner) position that walks
/// its n elements with stride inner: adjacent threads read adjacent
/// addresses when inner > 1, and no two threads write one element.  Sums
/// accumulate as the CPU backend's do (double for floating point, int64
/// otherwise), in order along the line.

#include <cstdint>
#include <type_traits>

#include <dimtensor/backends/thrust/assign.hpp>
#include <dimtensor/backends/thrust/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/reduce_identity.hpp>

#include <thrust/count.h>

namespace dimtensor {

namespace backends::thrust {

/// a + b.
struct sum_op {
  /// Combines the accumulator @p a with @p x.
  template <class A>
  DIMTENSOR_HOST_DEVICE A operator()(A a, A x) const {
    return a + x;
  }
};

/// The larger of m and x; NaN wins, so a NaN propagates as in PyTorch.
struct max_op {
  /// Combines the maximum so far @p m with @p x.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T m, T x) const {
    return (x > m || x != x) ? x : m;  // x != x: x is NaN
  }
};

/// The smaller of m and x; NaN wins.
struct min_op {
  /// Combines the minimum so far @p m with @p x.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T m, T x) const {
    return (x < m || x != x) ? x : m;
  }
};

/// The accumulator converted to the output type R.
template <class R>
struct cast_to {
  /// Converts @p a.
  template <class A>
  DIMTENSOR_HOST_DEVICE R operator()(A a) const {
    return static_cast<R>(a);
  }
};

/// The accumulator divided by the count, as T (a mean).
template <class T, class A>
struct divide_by {
  A count;  ///< The number of elements summed.
  /// Divides @p a by the count.
  DIMTENSOR_HOST_DEVICE T operator()(A a) const { return static_cast<T>(a / count); }
};

/// @brief One line of sum, mean, max or min: folds the n values along the
/// reduced dim in A, starting from `init`, and stores `finish(acc)` as R.
template <class T, class R, class A, class Combine, class Finish>
struct reduce_line {
  T const* in;      ///< The [outer, n, inner] input.
  R* out;           ///< The [outer, inner] output.
  index_t n;        ///< The extent of the reduced dim.
  index_t inner;    ///< The product of the extents after it.
  A init;           ///< The fold's identity.
  Combine combine;  ///< The fold's operation.
  Finish finish;    ///< From the accumulator to the output.

  /// Reduces line @p line (= o * inner + i).
  DIMTENSOR_HOST_DEVICE void operator()(index_t line) const {
    index_t const o = line / inner;
    index_t const i = line - o * inner;
    T const* x = in + o * n * inner + i;
    A acc = init;
    for (index_t j = 0; j < n; ++j) acc = combine(acc, static_cast<A>(x[j * inner]));
    out[line] = finish(acc);
  }
};

/// @brief Runs reduce_line over the outer * inner lines.
template <class Backend, class T, class R, class A, class Combine, class Finish>
void reduce_lines(T const* in, R* out, index_t outer, index_t n, index_t inner, A init, Combine combine,
                  Finish finish) {
  if (outer == 0 || inner == 0) return;
  for_each_index<Backend>(outer * inner,
                          reduce_line<T, R, A, Combine, Finish>{in, out, n, inner, init, combine, finish});
}

/// @brief One line of argmax: the index of the first maximum, or of the
/// first NaN (which wins over numbers).
template <class T>
struct argmax_line {
  T const* in;        ///< The [outer, n, inner] input.
  std::int64_t* out;  ///< The [outer, inner] indices.
  index_t n;          ///< The extent of the reduced dim (> 0).
  index_t inner;      ///< The product of the extents after it.

  /// Finds the maximum of line @p line (= o * inner + i).
  DIMTENSOR_HOST_DEVICE void operator()(index_t line) const {
    index_t const o = line / inner;
    index_t const i = line - o * inner;
    T const* x = in + o * n * inner + i;
    T best = x[0];
    std::int64_t idx = 0;
    for (index_t j = 1; j < n; ++j) {
      T const v = x[j * inner];
      // Strictly greater keeps the first of equal maxima; a NaN replaces any
      // number but not a NaN.
      if (v > best || (v != v && best == best)) {
        best = v;
        idx = j;
      }
    }
    out[line] = idx;
  }
};

/// Whether @p x holds the extremum @p value (NaN matches NaN: a NaN maximum
/// comes from the first NaN, as argmax finds it).
template <class T>
DIMTENSOR_HOST_DEVICE inline bool holds_extremum(T x, T value) {
  return x == value || (x != x && value != value);
}

/// @brief One line of the backward pass of max or min along a dim: the
/// gradient goes to the first index holding the result, 0 elsewhere.
template <class T>
struct extremum_backward_line {
  T const* in;     ///< The [outer, n, inner] input.
  T const* value;  ///< The [outer, inner] result of the max or min.
  T const* g;      ///< The [outer, inner] gradient of the result.
  T* dx;           ///< The [outer, n, inner] gradient of the input.
  index_t n;       ///< The extent of the reduced dim.
  index_t inner;   ///< The product of the extents after it.

  /// Writes the gradient along line @p line (= o * inner + i).
  DIMTENSOR_HOST_DEVICE void operator()(index_t line) const {
    index_t const o = line / inner;
    index_t const i = line - o * inner;
    index_t const base = o * n * inner + i;
    T const v = value[line];
    bool found = false;
    for (index_t j = 0; j < n; ++j) {
      bool const first = !found && holds_extremum(in[base + j * inner], v);
      dx[base + j * inner] = first ? g[line] : T(0);
      found = found || first;
    }
  }
};

/// Whether an element holds the extremum `value` (a predicate for count_if).
template <class T>
struct holds_value {
  T value;  ///< The extremum.
  /// Whether @p x holds it.
  DIMTENSOR_HOST_DEVICE bool operator()(T x) const { return holds_extremum(x, value); }
};

/// Element k of the backward pass of a full max or min: its share of the
/// gradient where it holds the extremum, 0 elsewhere.
template <class T>
struct extremum_all_backward_element {
  T const* in;  ///< The input.
  T value;      ///< The extremum.
  T share;      ///< The gradient over the number of elements holding it.
  T* dx;        ///< The gradient of the input.
  /// Writes element @p k.
  DIMTENSOR_HOST_DEVICE void operator()(index_t k) const { dx[k] = holds_extremum(in[k], value) ? share : T(0); }
};

}  // namespace backends::thrust

/// @brief Sums along the middle dim of the row-major [outer, n, inner] input
/// @p in into the [outer, inner] output @p out (0 where n is 0).
template <class System, class T, class R>
void backend_sum(thrust_backend<System>, T const* in, R* out, index_t outer, index_t n, index_t inner) {
  using A = backends::sum_accumulator_t<T>;
  backends::thrust::reduce_lines<thrust_backend<System>>(in, out, outer, n, inner, A{0}, backends::thrust::sum_op{},
                                                         backends::thrust::cast_to<R>{});
}

/// @brief Means along the middle dim of [outer, n, inner] (floating point;
/// NaN where n is 0, as in PyTorch).
template <class System, class T>
void backend_mean(thrust_backend<System>, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  static_assert(std::is_floating_point_v<T>, "backend_mean: floating-point elements only");
  using A = backends::sum_accumulator_t<T>;
  backends::thrust::reduce_lines<thrust_backend<System>>(in, out, outer, n, inner, A{0}, backends::thrust::sum_op{},
                                                         backends::thrust::divide_by<T, A>{static_cast<A>(n)});
}

/// @brief Maxima along the middle dim of [outer, n, inner]; n must be > 0.
/// A NaN along the dim gives NaN.
template <class System, class T>
void backend_max(thrust_backend<System>, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  backends::thrust::reduce_lines<thrust_backend<System>>(in, out, outer, n, inner,
                                                         backends::lowest_value<T>(),
                                                         backends::thrust::max_op{}, backends::thrust::cast_to<T>{});
}

/// @brief Minima along the middle dim of [outer, n, inner]; n must be > 0.
/// A NaN along the dim gives NaN.
template <class System, class T>
void backend_min(thrust_backend<System>, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  backends::thrust::reduce_lines<thrust_backend<System>>(in, out, outer, n, inner,
                                                         backends::highest_value<T>(),
                                                         backends::thrust::min_op{}, backends::thrust::cast_to<T>{});
}

/// @brief Indices of the maxima along the middle dim of [outer, n, inner];
/// n must be > 0.  The first maximum wins a tie, and the first NaN wins
/// over numbers, as in PyTorch.
template <class System, class T>
void backend_argmax(thrust_backend<System>, T const* in, std::int64_t* out, index_t outer, index_t n,
                    index_t inner) {
  if (outer == 0 || inner == 0) return;
  backends::thrust::for_each_index<thrust_backend<System>>(outer * inner,
                                                           backends::thrust::argmax_line<T>{in, out, n, inner});
}

/// @brief The gradient @p dx of the input [outer, n, inner] of a maximum or
/// minimum along the middle dim: the result's gradient @p g ([outer, inner])
/// goes to the first index along the dim holding the result @p value (the
/// index argmax gives), 0 elsewhere, as in PyTorch.
template <class System, class T>
void backend_extremum_backward(thrust_backend<System>, T const* in, T const* value, T const* g, T* dx,
                               index_t outer, index_t n, index_t inner) {
  if (outer == 0 || inner == 0) return;
  backends::thrust::for_each_index<thrust_backend<System>>(
      outer * inner, backends::thrust::extremum_backward_line<T>{in, value, g, dx, n, inner});
}

/// @brief The gradient @p dx of the @p count elements @p in of a full
/// maximum or minimum equal to @p value: the result's gradient @p g split
/// evenly among the elements holding @p value, 0 elsewhere (PyTorch's rule
/// for ties).  @p value and @p g are host scalars.
template <class System, class T>
void backend_extremum_all_backward(thrust_backend<System>, T const* in, index_t count, T value, T g, T* dx) {
  if (count <= 0) return;
  auto const ties = static_cast<index_t>(
      ::thrust::count_if(thrust_backend<System>::policy(), in, in + count, backends::thrust::holds_value<T>{value}));
  T const share = ties > 0 ? g / static_cast<T>(ties) : T(0);
  backends::thrust::for_each_index<thrust_backend<System>>(
      count, backends::thrust::extremum_all_backward_element<T>{in, value, share, dx});
}

}  // namespace dimtensor
