// Backend conformance, the kernels along one dim: sum, mean, max, min, argmax
// and the backward passes of max and min (reduce.hpp); softmax, log_softmax,
// the masked softmax, their backward passes, the sequence mask and the
// valid-length check (softmax.hpp); cross-entropy and its backward pass
// (cross_entropy.hpp); gather, its index check and index_add (gather.hpp).
// Every case runs on every backend (cpu, thrust_cpp, thrust_omp) and compares
// the backend's result with plain loops over the same inputs: exactly for
// integers, copies, maxima and indices, within a tolerance for float math.
#include "unit/backends/conformance/conformance.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace conformance {
namespace {

// ---------------------------------------------------------------------------
// Plain references, on [outer, n, inner] buffers.
// ---------------------------------------------------------------------------

/// The sum (Sum = double or int64) of each line along the middle dim.
template <class Sum, class T>
std::vector<Sum> line_sums(std::vector<T> const& x, shape s) {
  std::vector<Sum> out(static_cast<std::size_t>(s.lines()), Sum(0));
  for (index_t o = 0; o < s.outer; ++o) {
    for (index_t i = 0; i < s.inner; ++i) {
      Sum acc = 0;
      for (index_t j = 0; j < s.n; ++j) acc += static_cast<Sum>(x[s.at(o, j, i)]);
      out[static_cast<std::size_t>(o * s.inner + i)] = acc;
    }
  }
  return out;
}

/// The maximum (or minimum) of each line: NaN when the line holds one.
template <class T>
std::vector<T> line_extrema(std::vector<T> const& x, shape s, bool is_max) {
  std::vector<T> out(static_cast<std::size_t>(s.lines()));
  for (index_t o = 0; o < s.outer; ++o) {
    for (index_t i = 0; i < s.inner; ++i) {
      bool nan = false;
      T best = is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      for (index_t j = 0; j < s.n; ++j) {
        T const v = x[s.at(o, j, i)];
        if (v != v) {
          nan = true;
        } else if (is_max ? v > best : v < best) {
          best = v;
        }
      }
      out[static_cast<std::size_t>(o * s.inner + i)] = nan ? std::numeric_limits<T>::quiet_NaN() : best;
    }
  }
  return out;
}

/// Whether @p x is the extremum @p value (a NaN extremum is any NaN).
template <class T>
bool holds(T x, T value) {
  return x == value || (x != x && value != value);
}

/// The index of each line's maximum: its first NaN if any, else its first maximum.
template <class T>
std::vector<std::int64_t> line_argmax(std::vector<T> const& x, shape s) {
  auto const value = line_extrema(x, s, true);
  std::vector<std::int64_t> out(static_cast<std::size_t>(s.lines()));
  for (index_t o = 0; o < s.outer; ++o) {
    for (index_t i = 0; i < s.inner; ++i) {
      index_t j = 0;
      while (!holds(x[s.at(o, j, i)], value[static_cast<std::size_t>(o * s.inner + i)])) ++j;
      out[static_cast<std::size_t>(o * s.inner + i)] = j;
    }
  }
  return out;
}

/// The gradient of a max or min along the middle dim: g at each line's first extremum.
template <class T>
std::vector<T> extremum_gradient(std::vector<T> const& x, std::vector<T> const& value, std::vector<T> const& g,
                                 shape s) {
  std::vector<T> dx(x.size(), T(0));
  for (index_t o = 0; o < s.outer; ++o) {
    for (index_t i = 0; i < s.inner; ++i) {
      auto const line = static_cast<std::size_t>(o * s.inner + i);
      for (index_t j = 0; j < s.n; ++j) {
        if (holds(x[s.at(o, j, i)], value[line])) {
          dx[s.at(o, j, i)] = g[line];
          break;
        }
      }
    }
  }
  return dx;
}

/// The length of line (o, i) of a masked kernel, or n without lengths.
template <class L>
index_t length_of(L const* lengths, index_t repeat, shape s, index_t o, index_t i) {
  return lengths == nullptr ? s.n : static_cast<index_t>(lengths[(o * s.inner + i) / repeat]);
}

/// Softmax (or log_softmax) along the middle dim in double, d2l's mask
/// applied literally: elements at index >= the line's length read as @p masked.
template <class T, class L = std::int64_t>
std::vector<double> softmax_reference(std::vector<T> const& x, shape s, bool log, L const* lengths = nullptr,
                                      index_t repeat = 1, double masked = 0) {
  std::vector<double> out(x.size());
  std::vector<double> v(static_cast<std::size_t>(s.n));
  for (index_t o = 0; o < s.outer; ++o) {
    for (index_t i = 0; i < s.inner; ++i) {
      index_t const len = length_of(lengths, repeat, s, o, i);
      double m = -INFINITY;
      for (index_t j = 0; j < s.n; ++j) {
        v[static_cast<std::size_t>(j)] = j < len ? static_cast<double>(x[s.at(o, j, i)]) : masked;
        m = std::max(m, v[static_cast<std::size_t>(j)]);
      }
      double sum = 0;
      for (double a : v) sum += std::exp(a - m);
      for (index_t j = 0; j < s.n; ++j) {
        double const d = v[static_cast<std::size_t>(j)] - m;
        out[s.at(o, j, i)] = log ? d - std::log(sum) : std::exp(d) / sum;
      }
    }
  }
  return out;
}

/// The backward pass of softmax (dx = y (g - Σ g y)) or log_softmax
/// (dx = g - exp(y) Σ g) from the result y, in double; 0 at masked indices.
template <class T, class L = std::int64_t>
std::vector<double> softmax_gradient(std::vector<T> const& y, std::vector<T> const& g, shape s, bool log,
                                     L const* lengths = nullptr, index_t repeat = 1) {
  std::vector<double> dx(y.size());
  for (index_t o = 0; o < s.outer; ++o) {
    for (index_t i = 0; i < s.inner; ++i) {
      double sum = 0;
      for (index_t j = 0; j < s.n; ++j) {
        auto const k = s.at(o, j, i);
        sum += log ? static_cast<double>(g[k]) : static_cast<double>(g[k]) * static_cast<double>(y[k]);
      }
      index_t const len = length_of(lengths, repeat, s, o, i);
      for (index_t j = 0; j < s.n; ++j) {
        auto const k = s.at(o, j, i);
        double const yk = y[k];
        double const gk = g[k];
        dx[k] = j >= len ? 0.0 : log ? gk - std::exp(yk) * sum : yk * (gk - sum);
      }
    }
  }
  return dx;
}

}  // namespace

// ---------------------------------------------------------------------------
// reduce.hpp
// ---------------------------------------------------------------------------

TEMPLATE_TEST_CASE("conformance: backend_sum and backend_mean along a dim", "[backends][conformance][reduce]",
                   CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  values gen(101);
  auto check = [&](auto zero, auto out_zero, shape s, double lo, double hi) {
    using T = decltype(zero);
    using R = decltype(out_zero);
    INFO(type_name<T>() << " -> " << type_name<R>() << " " << s);
    auto const in = gen.uniform<T>(s.count(), lo, hi);
    buffer<B, T> const x(in);
    buffer<B, R> out(poisoned<R>(s.lines()));
    dt::backend_sum(B{}, x.data(), out.data(), s.outer, s.n, s.inner);
    if constexpr (std::is_floating_point_v<T>) {
      CHECK(first_difference(out.host(), line_sums<double>(in, s), tolerance<T>(1e-6)) == "");
      auto want = line_sums<double>(in, s);
      for (double& w : want) w /= static_cast<double>(s.n);  // 0 / 0: NaN for an empty dim
      buffer<B, T> mean(poisoned<T>(s.lines()));
      dt::backend_mean(B{}, x.data(), mean.data(), s.outer, s.n, s.inner);
      CHECK(first_difference(mean.host(), want, tolerance<T>(1e-6)) == "");
    } else {
      CHECK(first_difference(out.host(), line_sums<std::int64_t>(in, s)) == "");
    }
  };
  SECTION("every shape, against plain loops") {
    std::vector<shape> all = line_shapes();
    all.push_back({2, 0, 3});  // an empty dim: sums 0, means NaN
    all.push_back({0, 4, 3});
    all.push_back({3, 4, 0});
    for (shape s : all) {
      check(float{}, float{}, s, -100, 100);
      check(double{}, double{}, s, -100, 100);
      // int32 near its limits: the sums only fit the int64 accumulator.
      check(std::int32_t{}, std::int64_t{}, s, -2e9, 2e9);
      check(std::int64_t{}, std::int64_t{}, s, -1e12, 1e12);
    }
  }

  SECTION("float sums accumulate in double") {
    // 2^24 + 1 + 1 - 2^24: a float accumulator stays at 2^24 and ends at 0.
    buffer<B, float> const x({16777216.0f, 1.0f, 1.0f, -16777216.0f});
    buffer<B, float> out({0.0f});
    dt::backend_sum(B{}, x.data(), out.data(), 1, 4, 1);
    CHECK(out.host() == std::vector<float>{2.0f});
    dt::backend_mean(B{}, x.data(), out.data(), 1, 4, 1);
    CHECK(out.host() == std::vector<float>{0.5f});
  }
}

TEMPLATE_TEST_CASE("conformance: backend_max, backend_min and backend_argmax along a dim (ties, NaN)",
                   "[backends][conformance][reduce]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  values gen(102);
  auto check = [&](auto zero, shape s, bool nan) {
    using T = decltype(zero);
    INFO(type_name<T>() << " " << s << (nan ? " with NaN" : ""));
    auto in = gen.tied<T>(s.count());
    if constexpr (std::is_floating_point_v<T>) {
      if (nan) gen.sprinkle_nan(in, 7);
    }
    buffer<B, T> const x(in);
    buffer<B, T> out(poisoned<T>(s.lines()));
    dt::backend_max(B{}, x.data(), out.data(), s.outer, s.n, s.inner);
    CHECK(first_difference(out.host(), line_extrema(in, s, true)) == "");
    dt::backend_min(B{}, x.data(), out.data(), s.outer, s.n, s.inner);
    CHECK(first_difference(out.host(), line_extrema(in, s, false)) == "");
    buffer<B, std::int64_t> idx(poisoned<std::int64_t>(s.lines()));
    dt::backend_argmax(B{}, x.data(), idx.data(), s.outer, s.n, s.inner);
    CHECK(first_difference(idx.host(), line_argmax(in, s)) == "");
  };
  SECTION("every shape, against plain loops") {
    std::vector<shape> all = line_shapes();
    all.push_back({0, 4, 3});
    all.push_back({3, 4, 0});
    for (shape s : all) {
      for (bool nan : {false, true}) {
        check(float{}, s, nan);
        check(double{}, s, nan);
      }
      check(std::int32_t{}, s, false);
      check(std::int64_t{}, s, false);
    }
  }

  SECTION("the first maximum and the first NaN win") {
    float const nan = std::numeric_limits<float>::quiet_NaN();
    // Two lines along the middle dim (inner 2): [1, 3, 3, 2] and [1, nan, 5, nan].
    buffer<B, float> const x({1, 1, 3, nan, 3, 5, 2, nan});
    buffer<B, std::int64_t> idx({-1, -1});
    dt::backend_argmax(B{}, x.data(), idx.data(), 1, 4, 2);
    CHECK(idx.host() == std::vector<std::int64_t>{1, 1});
    buffer<B, float> m({0, 0});
    dt::backend_max(B{}, x.data(), m.data(), 1, 4, 2);
    CHECK(m.host()[0] == 3.0f);
    CHECK(std::isnan(m.host()[1]));
    dt::backend_min(B{}, x.data(), m.data(), 1, 4, 2);
    CHECK(m.host()[0] == 1.0f);
    CHECK(std::isnan(m.host()[1]));
  }

  SECTION("lines holding the integer type's own extremes") {
    std::int64_t const low = std::numeric_limits<std::int64_t>::lowest();
    std::int64_t const high = std::numeric_limits<std::int64_t>::max();
    buffer<B, std::int64_t> const x({low, low, high, high});
    buffer<B, std::int64_t> out({0, 0});
    dt::backend_max(B{}, x.data(), out.data(), 2, 2, 1);
    CHECK(out.host() == std::vector<std::int64_t>{low, high});
    dt::backend_min(B{}, x.data(), out.data(), 2, 2, 1);
    CHECK(out.host() == std::vector<std::int64_t>{low, high});
  }
}

TEMPLATE_TEST_CASE("conformance: backend_extremum_backward and backend_extremum_all_backward",
                   "[backends][conformance][reduce]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  values gen(103);
  auto check = [&](auto zero, shape s, bool nan) {
    using T = decltype(zero);
    INFO(type_name<T>() << " " << s << (nan ? " with NaN" : ""));
    auto in = gen.tied<T>(s.count());
    if (nan) gen.sprinkle_nan(in, 9);
    auto const g = gen.uniform<T>(s.lines(), -3, 3);
    buffer<B, T> const x(in);
    buffer<B, T> const gb(g);
    for (bool is_max : {true, false}) {
      INFO((is_max ? "max" : "min"));
      auto const value = line_extrema(in, s, is_max);
      buffer<B, T> const vb(value);
      buffer<B, T> dx(poisoned<T>(s.count()));
      dt::backend_extremum_backward(B{}, x.data(), vb.data(), gb.data(), dx.data(), s.outer, s.n, s.inner);
      CHECK(first_difference(dx.host(), extremum_gradient(in, value, g, s)) == "");
    }

    // The full reduction: every element holding the maximum gets an equal share.
    index_t const count = s.count();
    T const value = line_extrema(in, shape{1, count, 1}, true)[0];
    index_t ties = 0;
    for (T v : in) ties += holds(v, value) ? 1 : 0;
    std::vector<T> want(in.size());
    for (std::size_t k = 0; k < in.size(); ++k) want[k] = holds(in[k], value) ? T(3) / static_cast<T>(ties) : T(0);
    buffer<B, T> dx(poisoned<T>(count));
    dt::backend_extremum_all_backward(B{}, x.data(), count, value, T(3), dx.data());
    CHECK(first_difference(dx.host(), want) == "");
  };
  SECTION("every shape, against plain loops") {
    for (shape s : line_shapes()) {
      for (bool nan : {false, true}) {
        check(float{}, s, nan);
        check(double{}, s, nan);
      }
    }
  }

  SECTION("ties of a full maximum split the gradient; a value nobody holds gets none") {
    buffer<B, double> const x({1, 4, 2, 4, 4, 0});
    buffer<B, double> dx(poisoned<double>(6));
    dt::backend_extremum_all_backward(B{}, x.data(), 6, 4.0, 3.0, dx.data());
    CHECK(dx.host() == std::vector<double>{0, 1, 0, 1, 1, 0});
    dt::backend_extremum_all_backward(B{}, x.data(), 6, 7.0, 3.0, dx.data());
    CHECK(dx.host() == std::vector<double>(6, 0.0));
    buffer<B, double> untouched(poisoned<double>(1));
    dt::backend_extremum_all_backward(B{}, x.data(), 0, 4.0, 3.0, untouched.data());
    CHECK(untouched.host() == poisoned<double>(1));
  }

  SECTION("a line's gradient goes to its first extremum only") {
    // One line of 5 along the middle dim, two lines (inner 2): [2, 5, 5, 1, 5] and [0, 0, -1, 0, -1].
    buffer<B, float> const x({2, 0, 5, 0, 5, -1, 1, 0, 5, -1});
    buffer<B, float> const value({5, 0});
    buffer<B, float> const g({10, 20});
    buffer<B, float> dx(poisoned<float>(10));
    dt::backend_extremum_backward(B{}, x.data(), value.data(), g.data(), dx.data(), 1, 5, 2);
    CHECK(dx.host() == std::vector<float>{0, 20, 10, 0, 0, 0, 0, 0, 0, 0});
  }
}

// ---------------------------------------------------------------------------
// softmax.hpp
// ---------------------------------------------------------------------------

TEMPLATE_TEST_CASE("conformance: backend_softmax, backend_log_softmax and their backward passes",
                   "[backends][conformance][softmax]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  values gen(104);
  auto check = [&](auto zero, shape s) {
    using T = decltype(zero);
    INFO(type_name<T>() << " " << s);
    auto const in = gen.uniform<T>(s.count(), -20, 20);
    auto const g = gen.uniform<T>(s.count(), -3, 3);
    buffer<B, T> const x(in);
    buffer<B, T> const gb(g);
    for (bool log : {false, true}) {
      INFO((log ? "log_softmax" : "softmax"));
      auto const want = softmax_reference(in, s, log);
      buffer<B, T> out(poisoned<T>(s.count()));
      if (log) {
        dt::backend_log_softmax(B{}, x.data(), out.data(), s.outer, s.n, s.inner);
      } else {
        dt::backend_softmax(B{}, x.data(), out.data(), s.outer, s.n, s.inner);
      }
      CHECK(first_difference(out.host(), want, tolerance<T>(1e-5)) == "");

      // The backward pass, from the reference's result rounded to T.
      auto const y = rounded<T>(want);
      buffer<B, T> const yb(y);
      buffer<B, T> dx(poisoned<T>(s.count()));
      if (log) {
        dt::backend_log_softmax_backward(B{}, yb.data(), gb.data(), dx.data(), s.outer, s.n, s.inner);
      } else {
        dt::backend_softmax_backward(B{}, yb.data(), gb.data(), dx.data(), s.outer, s.n, s.inner);
      }
      CHECK(first_difference(dx.host(), softmax_gradient(y, g, s, log), tolerance<T>(1e-4)) == "");
    }
  };
  SECTION("every shape, against plain loops") {
    std::vector<shape> all = line_shapes();
    all.push_back({2, 0, 3});  // an empty dim writes nothing (and has nothing to write)
    all.push_back({0, 3, 2});
    for (shape s : all) {
      check(float{}, s);
      check(double{}, s);
    }
  }

  SECTION("large logits do not overflow; a single element is certain") {
    buffer<B, float> const x({1000.0f, 1000.0f, -1000.0f, 0.0f});
    buffer<B, float> out(poisoned<float>(4));
    dt::backend_softmax(B{}, x.data(), out.data(), 2, 2, 1);
    auto const y = out.host();
    CHECK(y[0] == Approx(0.5f));
    CHECK(y[1] == Approx(0.5f));
    CHECK(y[2] == 0.0f);
    CHECK(y[3] == 1.0f);
    dt::backend_log_softmax(B{}, x.data(), out.data(), 2, 2, 1);
    auto const l = out.host();
    CHECK(l[0] == Approx(-std::log(2.0f)));
    CHECK(l[2] == Approx(-1000.0f));
    CHECK(l[3] == 0.0f);
    dt::backend_softmax(B{}, x.data(), out.data(), 4, 1, 1);
    CHECK(out.host() == std::vector<float>(4, 1.0f));
  }
}

TEMPLATE_TEST_CASE("conformance: backend_masked_softmax, its backward pass and backend_sequence_mask",
                   "[backends][conformance][softmax]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  values gen(105);
  auto check = [&](auto zero, auto len_zero, shape s, index_t repeat) {
    using T = decltype(zero);
    using L = decltype(len_zero);
    INFO(type_name<T>() << ", " << type_name<L>() << " lengths, " << s << ", repeat " << repeat);
    auto const lengths = gen.lengths<L>(s.lines() / repeat, s.n);
    auto const in = gen.uniform<T>(s.count(), -10, 10);
    auto const g = gen.uniform<T>(s.count(), -3, 3);
    buffer<B, L> const lb(lengths);
    buffer<B, T> const x(in);
    buffer<B, T> const gb(g);
    T const masked = T(-1e6);

    auto const want = softmax_reference(in, s, false, lengths.data(), repeat, -1e6);
    buffer<B, T> out(poisoned<T>(s.count()));
    dt::backend_masked_softmax(B{}, x.data(), out.data(), s.outer, s.n, s.inner, lb.data(), repeat, masked);
    CHECK(first_difference(out.host(), want, tolerance<T>(1e-5)) == "");

    auto const y = rounded<T>(want);
    buffer<B, T> const yb(y);
    buffer<B, T> dx(poisoned<T>(s.count()));
    dt::backend_masked_softmax_backward(B{}, yb.data(), gb.data(), dx.data(), s.outer, s.n, s.inner, lb.data(),
                                        repeat);
    CHECK(first_difference(dx.host(), softmax_gradient(y, g, s, false, lengths.data(), repeat),
                           tolerance<T>(1e-4)) == "");

    std::vector<T> masked_in = in;
    for (index_t o = 0; o < s.outer; ++o) {
      for (index_t i = 0; i < s.inner; ++i) {
        for (index_t j = length_of(lengths.data(), repeat, s, o, i); j < s.n; ++j) masked_in[s.at(o, j, i)] = T(-7);
      }
    }
    dt::backend_sequence_mask(B{}, x.data(), out.data(), s.outer, s.n, s.inner, lb.data(), repeat, T(-7));
    CHECK(first_difference(out.host(), masked_in) == "");
  };
  SECTION("every shape, against plain loops") {
    for (shape s : line_shapes()) {
      index_t const lines = s.lines();
      for (index_t repeat : {index_t{1}, s.inner, lines}) {
        if (repeat <= 0 || lines % repeat != 0) continue;
        check(float{}, std::int64_t{}, s, repeat);
        check(double{}, std::int32_t{}, s, repeat);
      }
    }
  }

  SECTION("a length of 0 gives a uniform row, a length of n the plain softmax") {
    buffer<B, float> const x({1, 2, 3, 4, 5, 6});
    buffer<B, std::int64_t> const lengths({0, 3});
    buffer<B, float> out(poisoned<float>(6));
    dt::backend_masked_softmax(B{}, x.data(), out.data(), 2, 3, 1, lengths.data(), 1, -1e6f);
    auto const y = out.host();
    double const total = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
    for (std::size_t j = 0; j < 3; ++j) {
      CHECK(y[j] == Approx(1.0 / 3));
      CHECK(y[3 + j] == Approx(std::exp(static_cast<double>(j) + 1) / total));
    }
  }

  SECTION("an empty dim writes nothing") {
    buffer<B, float> const x({1.0f});
    buffer<B, std::int64_t> const lengths({0, 0, 0, 0, 0, 0});
    buffer<B, float> out({7.0f});
    dt::backend_masked_softmax(B{}, x.data(), out.data(), 2, 0, 3, lengths.data(), 1, -1e6f);
    dt::backend_masked_softmax_backward(B{}, x.data(), x.data(), out.data(), 2, 0, 3, lengths.data(), 1);
    dt::backend_sequence_mask(B{}, x.data(), out.data(), 2, 0, 3, lengths.data(), 1, 0.0f);
    CHECK(out.host() == std::vector<float>{7.0f});
  }
}

TEMPLATE_TEST_CASE("conformance: backend_first_invalid_length finds the first length outside [0, limit]",
                   "[backends][conformance][softmax]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  buffer<B, std::int64_t> const valid({0, 3, 5, 5, 1});
  CHECK(dt::backend_first_invalid_length(B{}, valid.data(), 5, 5) == -1);
  CHECK(dt::backend_first_invalid_length(B{}, valid.data(), 5, 4) == 2);
  CHECK(dt::backend_first_invalid_length(B{}, valid.data(), 5, 0) == 1);
  CHECK(dt::backend_first_invalid_length(B{}, valid.data(), 2, 3) == -1);
  CHECK(dt::backend_first_invalid_length(B{}, valid.data(), 0, 0) == -1);
  buffer<B, std::int32_t> const negative({2, 1, -1, 7});
  CHECK(dt::backend_first_invalid_length(B{}, negative.data(), 4, 3) == 2);
  CHECK(dt::backend_first_invalid_length(B{}, negative.data(), 4, 100) == 2);
  CHECK(dt::backend_first_invalid_length(B{}, negative.data(), 2, 3) == -1);

  // Long runs, where a parallel search must still report the first: invalid
  // lengths near the end, one in the middle, and at the very start.
  std::vector<std::int64_t> lengths(100000, 4);
  buffer<B, std::int64_t> const all_valid(lengths);
  CHECK(dt::backend_first_invalid_length(B{}, all_valid.data(), 100000, 4) == -1);
  lengths[99999] = 5;
  lengths[90001] = -3;
  lengths[70000] = 9;
  buffer<B, std::int64_t> const late(lengths);
  CHECK(dt::backend_first_invalid_length(B{}, late.data(), 100000, 4) == 70000);
  CHECK(dt::backend_first_invalid_length(B{}, late.data(), 70000, 4) == -1);
  CHECK(dt::backend_first_invalid_length(B{}, late.data(), 100000, 9) == 90001);
  lengths[0] = 5;
  buffer<B, std::int64_t> const first(lengths);
  CHECK(dt::backend_first_invalid_length(B{}, first.data(), 100000, 4) == 0);

  // Random lengths, some invalid, against a plain search.
  values gen(106);
  for (index_t limit : {index_t{0}, index_t{3}, index_t{50}}) {
    auto const random = gen.uniform<std::int32_t>(1000, -1, static_cast<double>(limit) + 40);
    buffer<B, std::int32_t> const rb(random);
    for (index_t count : {index_t{1}, index_t{10}, index_t{1000}}) {
      index_t want = -1;
      for (index_t k = 0; k < count && want < 0; ++k) {
        if (random[static_cast<std::size_t>(k)] < 0 || random[static_cast<std::size_t>(k)] > limit) want = k;
      }
      CHECK(dt::backend_first_invalid_length(B{}, rb.data(), count, limit) == want);
    }
  }
}

// ---------------------------------------------------------------------------
// cross_entropy.hpp
// ---------------------------------------------------------------------------

TEMPLATE_TEST_CASE("conformance: backend_cross_entropy and backend_cross_entropy_backward",
                   "[backends][conformance][cross_entropy]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  values gen(107);
  auto check = [&](auto zero, auto label_zero, shape s) {
    using T = decltype(zero);
    using L = decltype(label_zero);
    INFO(type_name<T>() << ", " << type_name<L>() << " labels, " << s);
    auto const in = gen.uniform<T>(s.count(), -30, 30);
    auto const labels = gen.uniform<L>(s.lines(), 0, static_cast<double>(s.n - 1));
    auto const g = gen.uniform<T>(s.lines(), -3, 3);

    // The reference: the line's maximum, the log of its sum of exponentials, the loss.
    std::vector<T> shift(static_cast<std::size_t>(s.lines()));
    std::vector<double> logs(shift.size());
    std::vector<double> loss(shift.size());
    for (index_t o = 0; o < s.outer; ++o) {
      for (index_t i = 0; i < s.inner; ++i) {
        auto const k = static_cast<std::size_t>(o * s.inner + i);
        T m = in[s.at(o, 0, i)];
        for (index_t j = 1; j < s.n; ++j) m = std::max(m, in[s.at(o, j, i)]);
        double sum = 0;
        for (index_t j = 0; j < s.n; ++j) sum += std::exp(static_cast<double>(in[s.at(o, j, i)]) - m);
        shift[k] = m;
        logs[k] = std::log(sum);
        loss[k] = (m - static_cast<double>(in[s.at(o, static_cast<index_t>(labels[k]), i)])) + logs[k];
      }
    }

    buffer<B, T> const x(in);
    buffer<B, L> const lb(labels);
    buffer<B, T> lossb(poisoned<T>(s.lines()));
    buffer<B, T> shiftb(poisoned<T>(s.lines()));
    buffer<B, T> logsb(poisoned<T>(s.lines()));
    dt::backend_cross_entropy(B{}, x.data(), lb.data(), lossb.data(), shiftb.data(), logsb.data(), s.outer, s.n,
                              s.inner);
    CHECK(first_difference(shiftb.host(), shift) == "");
    CHECK(first_difference(logsb.host(), logs, tolerance<T>(1e-5)) == "");
    CHECK(first_difference(lossb.host(), loss, tolerance<T>(1e-5)) == "");

    // The backward pass from the reference's shift and logs (rounded to T):
    // (softmax - one-hot) · g[k · g_step] · scale.
    auto const logs_t = rounded<T>(logs);
    buffer<B, T> const sb(shift);
    buffer<B, T> const logb(logs_t);
    buffer<B, T> const gb(g);
    for (index_t g_step : {index_t{0}, index_t{1}}) {
      INFO("g_step " << g_step);
      std::vector<double> want(in.size());
      for (index_t o = 0; o < s.outer; ++o) {
        for (index_t j = 0; j < s.n; ++j) {
          for (index_t i = 0; i < s.inner; ++i) {
            auto const k = static_cast<std::size_t>(o * s.inner + i);
            double const p = std::exp((static_cast<double>(in[s.at(o, j, i)]) - shift[k]) - logs_t[k]);
            double const hot = static_cast<index_t>(labels[k]) == j ? 1.0 : 0.0;
            want[s.at(o, j, i)] = (p - hot) * static_cast<double>(g[k * static_cast<std::size_t>(g_step)]) * 0.25;
          }
        }
      }
      buffer<B, T> dx(poisoned<T>(s.count()));
      dt::backend_cross_entropy_backward(B{}, x.data(), lb.data(), sb.data(), logb.data(), gb.data(), g_step, T(0.25),
                                         dx.data(), s.outer, s.n, s.inner);
      CHECK(first_difference(dx.host(), want, tolerance<T>(1e-5)) == "");
    }
  };
  SECTION("every shape, against plain loops") {
    std::vector<shape> all = line_shapes();
    all.push_back({0, 4, 3});
    for (shape s : all) {
      check(float{}, std::int64_t{}, s);
      check(double{}, std::int32_t{}, s);
    }
  }

  SECTION("large logits lose no digits; an empty class dim writes nothing") {
    // Logits [1000, 0] with label 1: the loss is 1000 exactly (as float).
    buffer<B, float> const x({1000.0f, 0.0f});
    buffer<B, std::int64_t> const label({1});
    buffer<B, float> loss({0.0f});
    buffer<B, float> shift({0.0f});
    buffer<B, float> logs({0.0f});
    dt::backend_cross_entropy(B{}, x.data(), label.data(), loss.data(), shift.data(), logs.data(), 1, 2, 1);
    CHECK(loss.host() == std::vector<float>{1000.0f});
    CHECK(shift.host() == std::vector<float>{1000.0f});
    CHECK(logs.host() == std::vector<float>{0.0f});

    buffer<B, std::int64_t> const labels(std::vector<std::int64_t>(6, 0));
    buffer<B, float> out({7.0f});
    dt::backend_cross_entropy(B{}, x.data(), labels.data(), out.data(), out.data(), out.data(), 2, 0, 3);
    dt::backend_cross_entropy_backward(B{}, x.data(), labels.data(), x.data(), x.data(), x.data(), 1, 1.0f,
                                       out.data(), 2, 0, 3);
    CHECK(out.host() == std::vector<float>{7.0f});
  }
}

// ---------------------------------------------------------------------------
// gather.hpp
// ---------------------------------------------------------------------------

TEMPLATE_TEST_CASE("conformance: backend_gather, backend_first_out_of_range and backend_index_add",
                   "[backends][conformance][gather]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  values gen(108);
  // [outer, extent, inner] sources gathered at count indices.
  struct gather_shape {
    index_t outer, extent, inner, count;
  };
  std::vector<gather_shape> const shapes = {{1, 5, 1, 8},   {3, 4, 2, 6},  {2, 7, 5, 1},   {4, 10, 33, 40},
                                            {3, 20, 1, 17}, {1, 3, 4, 0},  {0, 3, 2, 4},   {2, 1, 3, 5},
                                            {2, 4, 0, 3},   {6, 50, 64, 90}};
  // index_add skips the entries whose index is `skip` (-1: none)
  auto check = [&](auto zero, auto index_zero, gather_shape s, index_t skip) {
    using T = decltype(zero);
    using I = decltype(index_zero);
    INFO(type_name<T>() << ", " << type_name<I>() << " indices, [" << s.outer << ", " << s.extent << ", " << s.inner
                        << "] at " << s.count << " indices, skipping " << skip);
    // Few distinct indices, so that repeats are common.
    auto const indices = gen.uniform<I>(s.count, 0, static_cast<double>(s.extent - 1));
    auto const src = gen.uniform<T>(s.outer * s.extent * s.inner, -50, 50);
    buffer<B, I> const ib(indices);
    buffer<B, T> const sb(src);
    CHECK(dt::backend_first_out_of_range(B{}, ib.data(), s.count, s.extent) == -1);

    std::vector<T> want(static_cast<std::size_t>(s.outer * s.count * s.inner));
    for (index_t o = 0; o < s.outer; ++o) {
      for (index_t k = 0; k < s.count; ++k) {
        for (index_t i = 0; i < s.inner; ++i) {
          want[static_cast<std::size_t>((o * s.count + k) * s.inner + i)] =
              src[static_cast<std::size_t>((o * s.extent + static_cast<index_t>(indices[static_cast<std::size_t>(k)])) *
                                               s.inner +
                                           i)];
        }
      }
    }
    buffer<B, T> out(poisoned<T>(s.outer * s.count * s.inner));
    dt::backend_gather(B{}, out.data(), sb.data(), s.outer, s.extent, s.inner, ib.data(), s.count);
    CHECK(first_difference(out.host(), want) == "");

    // index_add adds in the order of k, so even float sums are exact against
    // the same order here.
    auto const grad = gen.uniform<T>(s.outer * s.count * s.inner, -50, 50);
    auto acc = gen.uniform<T>(s.outer * s.extent * s.inner, -5, 5);
    buffer<B, T> const gb(grad);
    buffer<B, T> accb(acc);
    for (index_t o = 0; o < s.outer; ++o) {
      for (index_t k = 0; k < s.count; ++k) {
        if (static_cast<index_t>(indices[static_cast<std::size_t>(k)]) == skip) continue;
        for (index_t i = 0; i < s.inner; ++i) {
          acc[static_cast<std::size_t>((o * s.extent + static_cast<index_t>(indices[static_cast<std::size_t>(k)])) *
                                           s.inner +
                                       i)] += grad[static_cast<std::size_t>((o * s.count + k) * s.inner + i)];
        }
      }
    }
    dt::backend_index_add(B{}, accb.data(), gb.data(), s.outer, s.extent, s.inner, ib.data(), s.count, skip);
    CHECK(first_difference(accb.host(), acc) == "");
  };
  SECTION("every shape, against plain loops") {
    for (gather_shape s : shapes) {
      for (index_t skip : {index_t{-1}, index_t{1}}) {
        check(std::int32_t{}, std::int64_t{}, s, skip);
        check(std::int64_t{}, std::int32_t{}, s, skip);
        check(float{}, std::int64_t{}, s, skip);
        check(double{}, std::int32_t{}, s, skip);
      }
    }
  }

  SECTION("the index check finds the first index outside [0, extent)") {
    buffer<B, std::int64_t> const indices({0, 2, 3, -1, 9});
    CHECK(dt::backend_first_out_of_range(B{}, indices.data(), 5, 3) == 2);
    CHECK(dt::backend_first_out_of_range(B{}, indices.data(), 5, 4) == 3);
    CHECK(dt::backend_first_out_of_range(B{}, indices.data(), 5, 100) == 3);
    CHECK(dt::backend_first_out_of_range(B{}, indices.data(), 3, 4) == -1);
    CHECK(dt::backend_first_out_of_range(B{}, indices.data(), 0, 4) == -1);
    CHECK(dt::backend_first_out_of_range(B{}, indices.data(), 1, 0) == 0);
    buffer<B, std::int32_t> const small({1, 1, 5});
    CHECK(dt::backend_first_out_of_range(B{}, small.data(), 3, 5) == 2);
    CHECK(dt::backend_first_out_of_range(B{}, small.data(), 3, 6) == -1);

    // A long run with indices out of range near its end: the first is reported.
    std::vector<std::int32_t> many(100000, 3);
    many[99990] = -1;
    many[80000] = 4;
    buffer<B, std::int32_t> const late(many);
    CHECK(dt::backend_first_out_of_range(B{}, late.data(), 100000, 4) == 80000);
    CHECK(dt::backend_first_out_of_range(B{}, late.data(), 100000, 5) == 99990);
    CHECK(dt::backend_first_out_of_range(B{}, late.data(), 80000, 4) == -1);
  }

  SECTION("repeated indices add up") {
    // src [1, 4, 2] at indices {1, 1, 0, 1} into dst [1, 2, 2].
    buffer<B, std::int64_t> const indices({1, 1, 0, 1});
    buffer<B, std::int64_t> const src({1, 10, 2, 20, 3, 30, 4, 40});
    buffer<B, std::int64_t> dst({0, 0, 100, 100});
    dt::backend_index_add(B{}, dst.data(), src.data(), 1, 2, 2, indices.data(), 4, -1);
    CHECK(dst.host() == std::vector<std::int64_t>{3, 30, 107, 170});
    // the entries of index 1 skipped (an embedding's padding row)
    buffer<B, std::int64_t> padded({0, 0, 100, 100});
    dt::backend_index_add(B{}, padded.data(), src.data(), 1, 2, 2, indices.data(), 4, 1);
    CHECK(padded.host() == std::vector<std::int64_t>{3, 30, 100, 100});
  }
}

}  // namespace conformance
