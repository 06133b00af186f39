#pragma once
/// @file
/// @brief The CPU backend's reductions along one dim: sum, mean, max, min
/// and argmax over a row-major input viewed as [outer, n, inner], the
/// reduced dim in the middle, and the backward passes of max and min.
///
/// Float sums accumulate in double (and integer sums in int64), so that a
/// sum of 10^6 floats is exact to about 1e-10 relative before the final
/// rounding; double sums use 16 independent partial sums.  Where the
/// reduced dim is the last one (inner == 1) a row is folded into 16
/// partial results, which the compiler turns into vector lanes; otherwise
/// the loop runs over `inner`, which is contiguous and vectorizes as is.
/// Threads split the outer rows.

/// Defined once the header is included (src/cpu/kernels.inl checks the order).
#define DIMTENSOR_BACKENDS_CPU_REDUCE_HPP 1

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include <dimtensor/backends/cpu/dispatch.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/reduce_identity.hpp>

namespace dimtensor {

namespace backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {

/// Partial results a contiguous fold keeps: enough for one AVX-512 register
/// of floats, and the independent chains that hide the add latency.
inline constexpr index_t fold_lanes = 16;

/// @brief Folds `load(0) … load(n-1)` with @p combine, starting from @p init,
/// through fold_lanes independent partial results (vectorizable).
template <class A, class Load, class Combine>
A lane_fold(index_t n, A init, Load const& load, Combine const& combine) {
  A part[fold_lanes];
  for (auto& p : part) p = init;
  index_t j = 0;
  for (; j + fold_lanes <= n; j += fold_lanes) {
    for (index_t l = 0; l < fold_lanes; ++l) part[l] = combine(part[l], load(j + l));
  }
  A acc = init;
  for (; j < n; ++j) acc = combine(acc, load(j));
  for (index_t l = 0; l < fold_lanes; ++l) acc = combine(acc, part[l]);
  return acc;
}

/// @brief The largest of @p init and `load(0) … load(n-1)`, through
/// independent lanes that vectorize (lane_fold with max_keep_nan does not).
/// A NaN may be passed over: for softmax, whose rows a NaN turns to NaN
/// through the exponentials' sum anyway, not for max() itself.
template <class T, class Load>
T lane_max(index_t n, T init, Load const& load) {
  constexpr index_t lanes = 16;
  T part[lanes];
  for (auto& p : part) p = init;
  index_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    for (index_t l = 0; l < lanes; ++l) {
      T const x = load(j + l);
      part[l] = part[l] < x ? x : part[l];
    }
  }
  T m = init;
  for (; j < n; ++j) {
    T const x = load(j);
    m = m < x ? x : m;
  }
  for (T p : part) m = m < p ? p : m;
  return m;
}

/// The larger of @p m and @p x; NaN wins, so a NaN propagates as in PyTorch.
template <class T>
inline T max_keep_nan(T m, T x) {
  return (x > m || x != x) ? x : m;  // x != x: x is NaN
}

/// The smaller of @p m and @p x; NaN wins.
template <class T>
inline T min_keep_nan(T m, T x) {
  return (x < m || x != x) ? x : m;
}

/// @brief Rows [begin, end) of reduce_rows.
///
/// A function of values rather than a lambda over captures: a store through
/// `out` could alias a captured variable of the same type, which would keep
/// the compiler from vectorizing.
template <class T, class R, class A, class Combine, class Finish>
void reduce_chunk(index_t begin, index_t end, T const* in, R* out, index_t n, index_t inner, A init, Combine combine,
                  Finish finish) {
  if (inner == 1) {
    for (index_t o = begin; o < end; ++o) {
      T const* x = in + o * n;
      out[o] = finish(lane_fold<A>(n, init, [x](index_t j) { return static_cast<A>(x[j]); }, combine));
    }
    return;
  }
  auto const acc = std::make_unique<A[]>(static_cast<std::size_t>(inner));  // not vector: vector<bool>
  A* a = acc.get();
  for (index_t o = begin; o < end; ++o) {
    for (index_t i = 0; i < inner; ++i) a[i] = init;
    for (index_t j = 0; j < n; ++j) {
      T const* x = in + (o * n + j) * inner;
      DIMTENSOR_SIMD
      for (index_t i = 0; i < inner; ++i) a[i] = combine(a[i], static_cast<A>(x[i]));
    }
    R* y = out + o * inner;
    DIMTENSOR_SIMD
    for (index_t i = 0; i < inner; ++i) y[i] = finish(a[i]);
  }
}

/// @brief The common loop of sum, mean, max and min.
///
/// For each outer row and each inner position, folds the n values along the
/// reduced dim in A, starting from @p init, and stores `finish(acc)` as R.
template <class T, class R, class A, class Combine, class Finish>
void reduce_rows(T const* in, R* out, index_t outer, index_t n, index_t inner, A init, Combine const& combine,
                 Finish const& finish) {
  if (outer == 0 || inner == 0) return;
  parallel_for(outer, n * inner, [=](index_t begin, index_t end) {
    reduce_chunk(begin, end, in, out, n, inner, init, combine, finish);
  });
}

/// Rows [begin, end) of backend_argmax (a function of values, as reduce_chunk).
template <class T>
void argmax_chunk(index_t begin, index_t end, T const* in, std::int64_t* out, index_t n, index_t inner) {
  // A later element replaces the best only when strictly greater, which keeps
  // the first of equal maxima; a NaN replaces any number but not a NaN.
  auto better = [](T x, T best) { return x > best || (x != x && best == best); };
  auto const best_buf = std::make_unique<T[]>(static_cast<std::size_t>(inner));
  T* best = best_buf.get();
  for (index_t o = begin; o < end; ++o) {
    T const* x0 = in + o * n * inner;
    std::int64_t* idx = out + o * inner;
    for (index_t i = 0; i < inner; ++i) {
      best[i] = x0[i];
      idx[i] = 0;
    }
    for (index_t j = 1; j < n; ++j) {
      T const* x = x0 + j * inner;
      DIMTENSOR_SIMD
      for (index_t i = 0; i < inner; ++i) {
        bool const b = better(x[i], best[i]);
        best[i] = b ? x[i] : best[i];
        idx[i] = b ? j : idx[i];
      }
    }
  }
}

/// Whether @p x holds the extremum @p value (NaN matches NaN: a NaN maximum
/// comes from the first NaN, as argmax finds it).
template <class T>
inline bool holds_extremum(T x, T value) {
  return x == value || (x != x && value != value);
}

/// Rows [begin, end) of backend_extremum_backward (a function of values, as reduce_chunk).
template <class T>
void extremum_backward_chunk(index_t begin, index_t end, T const* in, T const* value, T const* g, T* dx, index_t n,
                             index_t inner) {
  if (inner == 1) {
    for (index_t o = begin; o < end; ++o) {
      T const* x = in + o * n;
      T* d = dx + o * n;
      for (index_t j = 0; j < n; ++j) d[j] = T(0);
      for (index_t j = 0; j < n; ++j) {
        if (holds_extremum(x[j], value[o])) {
          d[j] = g[o];
          break;
        }
      }
    }
    return;
  }
  // The first index holding the extremum, per inner position (n: not yet found),
  // found in one sweep along the contiguous inner positions.
  auto const first_buf = std::make_unique<index_t[]>(static_cast<std::size_t>(inner));
  index_t* first = first_buf.get();
  for (index_t o = begin; o < end; ++o) {
    T const* x0 = in + o * n * inner;
    T* d0 = dx + o * n * inner;
    T const* v = value + o * inner;
    for (index_t i = 0; i < inner; ++i) first[i] = n;
    for (index_t j = 0; j < n; ++j) {
      T const* x = x0 + j * inner;
      T* d = d0 + j * inner;
      DIMTENSOR_SIMD
      for (index_t i = 0; i < inner; ++i) {
        first[i] = (first[i] == n && holds_extremum(x[i], v[i])) ? j : first[i];
        d[i] = T(0);
      }
    }
    for (index_t i = 0; i < inner; ++i) {
      if (first[i] < n) d0[first[i] * inner + i] = g[o * inner + i];
    }
  }
}

/// backend_sum's kernel (the runtime's levels carry it for float and double).
template <class T, class R>
void sum_rows(T const* in, R* out, index_t outer, index_t n, index_t inner) {
  using A = backends::sum_accumulator_t<T>;
  reduce_rows(
      in, out, outer, n, inner, A{0}, [](A a, A x) { return a + x; }, [](A a) { return static_cast<R>(a); });
}

/// backend_mean's kernel.
template <class T>
void mean_rows(T const* in, T* out, index_t outer, index_t n, index_t inner) {
  using A = backends::sum_accumulator_t<T>;
  A const count = static_cast<A>(n);
  reduce_rows(
      in, out, outer, n, inner, A{0}, [](A a, A x) { return a + x; },
      [count](A a) { return static_cast<T>(a / count); });
}

/// backend_max's kernel.
template <class T>
void max_rows(T const* in, T* out, index_t outer, index_t n, index_t inner) {
  reduce_rows(
      in, out, outer, n, inner, backends::lowest_value<T>(), [](T m, T x) { return max_keep_nan(m, x); },
      [](T m) { return m; });
}

/// backend_min's kernel.
template <class T>
void min_rows(T const* in, T* out, index_t outer, index_t n, index_t inner) {
  reduce_rows(
      in, out, outer, n, inner, backends::highest_value<T>(), [](T m, T x) { return min_keep_nan(m, x); },
      [](T m) { return m; });
}

}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace backends::cpu

/// @brief Sums along the middle dim of the row-major [outer, n, inner] input
/// @p in into the [outer, inner] output @p out (0 where n is 0).
template <class T, class R>
void backend_sum(cpu, T const* in, R* out, index_t outer, index_t n, index_t inner) {
  if constexpr (backends::cpu::has_level_kernels<T> && std::is_same_v<R, T>) {
    backends::cpu::kernels<T>().sum(in, out, outer, n, inner);
  } else {
    backends::cpu::sum_rows(in, out, outer, n, inner);
  }
}

/// @brief Means along the middle dim of [outer, n, inner] (floating point;
/// NaN where n is 0, as in PyTorch).
template <class T>
void backend_mean(cpu, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  static_assert(std::is_floating_point_v<T>, "backend_mean: floating-point elements only");
  if constexpr (backends::cpu::has_level_kernels<T>) {
    backends::cpu::kernels<T>().mean(in, out, outer, n, inner);
  } else {
    backends::cpu::mean_rows(in, out, outer, n, inner);
  }
}

/// @brief Maxima along the middle dim of [outer, n, inner]; n must be > 0.
/// A NaN along the dim gives NaN.
template <class T>
void backend_max(cpu, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  if constexpr (backends::cpu::has_level_kernels<T>) {
    backends::cpu::kernels<T>().max(in, out, outer, n, inner);
  } else {
    backends::cpu::max_rows(in, out, outer, n, inner);
  }
}

/// @brief Minima along the middle dim of [outer, n, inner]; n must be > 0.
/// A NaN along the dim gives NaN.
template <class T>
void backend_min(cpu, T const* in, T* out, index_t outer, index_t n, index_t inner) {
  if constexpr (backends::cpu::has_level_kernels<T>) {
    backends::cpu::kernels<T>().min(in, out, outer, n, inner);
  } else {
    backends::cpu::min_rows(in, out, outer, n, inner);
  }
}

/// @brief Indices of the maxima along the middle dim of [outer, n, inner];
/// n must be > 0.  The first maximum wins a tie, and the first NaN wins
/// over numbers, as in PyTorch.
template <class T>
void backend_argmax(cpu, T const* in, std::int64_t* out, index_t outer, index_t n, index_t inner) {
  if (outer == 0 || inner == 0) return;
  backends::cpu::parallel_for(outer, n * inner, [=](index_t begin, index_t end) {
    backends::cpu::argmax_chunk(begin, end, in, out, n, inner);
  });
}

/// @brief The gradient @p dx of the input [outer, n, inner] of a maximum or
/// minimum along the middle dim: the result's gradient @p g ([outer, inner])
/// goes to the first index along the dim holding the result @p value (the
/// index argmax gives), 0 elsewhere, as in PyTorch.
template <class T>
void backend_extremum_backward(cpu, T const* in, T const* value, T const* g, T* dx, index_t outer, index_t n,
                               index_t inner) {
  if (outer == 0 || inner == 0) return;
  backends::cpu::parallel_for(outer, n * inner, [=](index_t begin, index_t end) {
    backends::cpu::extremum_backward_chunk(begin, end, in, value, g, dx, n, inner);
  });
}

/// @brief The gradient @p dx of the @p count elements @p in of a full
/// maximum or minimum equal to @p value: the result's gradient @p g split
/// evenly among the elements holding @p value, 0 elsewhere (PyTorch's rule
/// for ties).
template <class T>
void backend_extremum_all_backward(cpu, T const* in, index_t count, T value, T g, T* dx) {
  index_t ties = 0;
  for (index_t k = 0; k < count; ++k) ties += backends::cpu::holds_extremum(in[k], value) ? 1 : 0;
  T const share = ties > 0 ? g / static_cast<T>(ties) : T(0);
  backends::cpu::parallel_for(count, 1, [=](index_t begin, index_t end) {
    // Locals, not the captures: a store through dx could alias a capture of type T.
    T const* const x = in;
    T* const d = dx;
    T const v = value;
    T const s = share;
    for (index_t k = begin; k < end; ++k) d[k] = backends::cpu::holds_extremum(x[k], v) ? s : T(0);
  });
}

}  // namespace dimtensor
