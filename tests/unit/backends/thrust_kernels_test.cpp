// Tests of the Thrust backend's kernels (backends/thrust/reduce.hpp,
// softmax.hpp, cross_entropy.hpp, gather.hpp) against the CPU backend's on
// the same inputs, for the host systems (thrust_cpp, and thrust_omp with
// OpenMP), whose memory the host reads directly.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/backends/cpu/cross_entropy.hpp>
#include <dimtensor/backends/cpu/gather.hpp>
#include <dimtensor/backends/cpu/reduce.hpp>
#include <dimtensor/backends/cpu/softmax.hpp>
#include <dimtensor/backends/thrust.hpp>

namespace dt = dimtensor;
using dt::index_t;

#if defined(_OPENMP)
#define THRUST_KERNELS_TEST_TAGS dt::thrust_cpp, dt::thrust_omp
#else
#define THRUST_KERNELS_TEST_TAGS dt::thrust_cpp
#endif

namespace {

// [outer, n, inner] shapes: the reduced dim last (inner 1) and strided, rows
// longer than the CPU's 16 fold lanes, one large enough for several threads.
struct shape {
  index_t outer, n, inner;
};
std::vector<shape> const shapes = {{3, 7, 1}, {2, 5, 4}, {1, 33, 1}, {4, 40, 3}, {3, 1, 5}, {1, 1, 1}, {64, 50, 33}};

std::string describe(shape s) {
  std::ostringstream os;
  os << "[" << s.outer << ", " << s.n << ", " << s.inner << "]";
  return os.str();
}

std::mt19937& rng() {
  static std::mt19937 g(20240611);
  return g;
}

template <class T>
std::vector<T> random_values(index_t count, double lo = -3, double hi = 3) {
  std::vector<T> v(static_cast<std::size_t>(count));
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = static_cast<T>(d(rng()));
  } else {
    std::uniform_int_distribution<long long> d(static_cast<long long>(lo), static_cast<long long>(hi));
    for (auto& x : v) x = static_cast<T>(d(rng()));
  }
  return v;
}

// Values from a few integers, so that ties are common.
template <class T>
std::vector<T> tied_values(index_t count) {
  std::vector<T> v(static_cast<std::size_t>(count));
  std::uniform_int_distribution<int> d(-2, 2);
  for (auto& x : v) x = static_cast<T>(d(rng()));
  return v;
}

// Replaces about one element in @p every by NaN.
template <class T>
void sprinkle_nan(std::vector<T>& v, int every) {
  std::uniform_int_distribution<int> d(0, every - 1);
  for (auto& x : v)
    if (d(rng()) == 0) x = std::numeric_limits<T>::quiet_NaN();
}

template <class T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  }
  return a == b;
}

template <class T>
bool close(T a, T b, double rel = 1e-5) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  double const da = a;
  double const db = b;
  return std::abs(da - db) <= rel * std::max(1.0, std::abs(db));
}

// The first position where the buffers differ (exactly, NaN equal to NaN), or -1.
template <class T>
index_t first_difference(std::vector<T> const& a, std::vector<T> const& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!same(a[k], b[k])) return static_cast<index_t>(k);
  return -1;
}

// The first position where the buffers differ by more than 1e-5 relative, or -1.
template <class T>
index_t first_far(std::vector<T> const& a, std::vector<T> const& b, double rel = 1e-5) {
  if (a.size() != b.size()) return 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!close(a[k], b[k], rel)) return static_cast<index_t>(k);
  return -1;
}

// Output buffers start as a value no kernel writes, so a missed element shows.
template <class T>
std::vector<T> poisoned(index_t count) {
  return std::vector<T>(static_cast<std::size_t>(count), static_cast<T>(-12345));
}

// Lengths in [0, n] for @p count rows, 0 and n among them.
template <class L>
std::vector<L> random_lengths(index_t count, index_t n) {
  std::vector<L> v = random_values<L>(count, 0, static_cast<double>(n));
  if (count > 0) v[0] = L(0);
  if (count > 1) v[static_cast<std::size_t>(count - 1)] = static_cast<L>(n);
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("thrust kernels: sum and mean agree with the CPU backend", "[backends][thrust][reduce]",
                   THRUST_KERNELS_TEST_TAGS) {
  TestType const thrust{};
  auto check = [&](auto zero, auto out_zero, shape s) {
    using T = decltype(zero);
    using R = decltype(out_zero);
    INFO(describe(s));
    auto const in = random_values<T>(s.outer * s.n * s.inner, -100, 100);
    auto want = poisoned<R>(s.outer * s.inner);
    auto got = poisoned<R>(s.outer * s.inner);
    dt::backend_sum(dt::cpu{}, in.data(), want.data(), s.outer, s.n, s.inner);
    dt::backend_sum(thrust, in.data(), got.data(), s.outer, s.n, s.inner);
    if constexpr (std::is_floating_point_v<R>) {
      CHECK(first_far(got, want) == -1);
    } else {
      CHECK(first_difference(got, want) == -1);
    }
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<T, R>) {
      dt::backend_mean(dt::cpu{}, in.data(), want.data(), s.outer, s.n, s.inner);
      dt::backend_mean(thrust, in.data(), got.data(), s.outer, s.n, s.inner);
      CHECK(first_far(got, want) == -1);
    }
  };
  std::vector<shape> all = shapes;
  all.push_back({2, 0, 3});  // n == 0: sums 0, means NaN
  all.push_back({0, 4, 3});
  for (shape s : all) {
    check(float{}, float{}, s);
    check(double{}, double{}, s);
    check(std::int32_t{}, std::int64_t{}, s);
    check(std::int64_t{}, std::int64_t{}, s);
  }

  SECTION("an empty dim sums to 0 and means NaN") {
    std::vector<float> const in(1, 1.0f);
    std::vector<float> out(6, 7.0f);
    dt::backend_sum(thrust, in.data(), out.data(), 2, 0, 3);
    for (float v : out) CHECK(v == 0.0f);
    dt::backend_mean(thrust, in.data(), out.data(), 2, 0, 3);
    for (float v : out) CHECK(std::isnan(v));
  }

  SECTION("float sums accumulate in double") {
    // 2^24 + 1 + 1: a float accumulator would stay at 2^24.
    std::vector<float> const in = {16777216.0f, 1.0f, 1.0f, -16777216.0f};
    float out = 0;
    dt::backend_sum(thrust, in.data(), &out, 1, 4, 1);
    CHECK(out == 2.0f);
  }
}

TEMPLATE_TEST_CASE("thrust kernels: max, min and argmax agree with the CPU backend (ties, NaN)",
                   "[backends][thrust][reduce]", THRUST_KERNELS_TEST_TAGS) {
  TestType const thrust{};
  auto check = [&](auto zero, shape s, bool nan) {
    using T = decltype(zero);
    INFO(describe(s) << (nan ? " with NaN" : ""));
    auto in = tied_values<T>(s.outer * s.n * s.inner);
    if constexpr (std::is_floating_point_v<T>) {
      if (nan) sprinkle_nan(in, 7);
    }
    index_t const lines = s.outer * s.inner;
    auto want = poisoned<T>(lines);
    auto got = poisoned<T>(lines);
    dt::backend_max(dt::cpu{}, in.data(), want.data(), s.outer, s.n, s.inner);
    dt::backend_max(thrust, in.data(), got.data(), s.outer, s.n, s.inner);
    CHECK(first_difference(got, want) == -1);
    dt::backend_min(dt::cpu{}, in.data(), want.data(), s.outer, s.n, s.inner);
    dt::backend_min(thrust, in.data(), got.data(), s.outer, s.n, s.inner);
    CHECK(first_difference(got, want) == -1);
    auto want_i = poisoned<std::int64_t>(lines);
    auto got_i = poisoned<std::int64_t>(lines);
    dt::backend_argmax(dt::cpu{}, in.data(), want_i.data(), s.outer, s.n, s.inner);
    dt::backend_argmax(thrust, in.data(), got_i.data(), s.outer, s.n, s.inner);
    CHECK(first_difference(got_i, want_i) == -1);
  };
  for (shape s : shapes) {
    for (bool nan : {false, true}) {
      check(float{}, s, nan);
      check(double{}, s, nan);
    }
    check(std::int32_t{}, s, false);
    check(std::int64_t{}, s, false);
  }

  SECTION("the first maximum and the first NaN win") {
    float const nan = std::numeric_limits<float>::quiet_NaN();
    // Two lines along the middle dim (inner 2): [1, 3, 3, 2] and [1, nan, 5, nan].
    std::vector<float> const in = {1, 1, 3, nan, 3, 5, 2, nan};
    std::vector<std::int64_t> idx(2, -1);
    dt::backend_argmax(thrust, in.data(), idx.data(), 1, 4, 2);
    CHECK(idx[0] == 1);
    CHECK(idx[1] == 1);
    std::vector<float> m(2, 0);
    dt::backend_max(thrust, in.data(), m.data(), 1, 4, 2);
    CHECK(m[0] == 3);
    CHECK(std::isnan(m[1]));
    dt::backend_min(thrust, in.data(), m.data(), 1, 4, 2);
    CHECK(m[0] == 1);
    CHECK(std::isnan(m[1]));
  }
}

TEMPLATE_TEST_CASE("thrust kernels: the backward passes of max and min agree with the CPU backend",
                   "[backends][thrust][reduce]", THRUST_KERNELS_TEST_TAGS) {
  TestType const thrust{};
  auto check = [&](auto zero, shape s, bool nan) {
    using T = decltype(zero);
    INFO(describe(s) << (nan ? " with NaN" : ""));
    auto in = tied_values<T>(s.outer * s.n * s.inner);
    if (nan) sprinkle_nan(in, 9);
    index_t const lines = s.outer * s.inner;
    auto const g = random_values<T>(lines);
    for (bool is_max : {true, false}) {
      std::vector<T> value(static_cast<std::size_t>(lines));
      if (is_max) {
        dt::backend_max(dt::cpu{}, in.data(), value.data(), s.outer, s.n, s.inner);
      } else {
        dt::backend_min(dt::cpu{}, in.data(), value.data(), s.outer, s.n, s.inner);
      }
      auto want = poisoned<T>(s.outer * s.n * s.inner);
      auto got = poisoned<T>(s.outer * s.n * s.inner);
      dt::backend_extremum_backward(dt::cpu{}, in.data(), value.data(), g.data(), want.data(), s.outer, s.n,
                                    s.inner);
      dt::backend_extremum_backward(thrust, in.data(), value.data(), g.data(), got.data(), s.outer, s.n, s.inner);
      CHECK(first_difference(got, want) == -1);
    }

    // The full reduction: ties share the gradient.
    index_t const count = s.outer * s.n * s.inner;
    T value = in[0];
    for (T x : in) value = dt::backends::cpu::max_keep_nan(value, x);
    auto want = poisoned<T>(count);
    auto got = poisoned<T>(count);
    dt::backend_extremum_all_backward(dt::cpu{}, in.data(), count, value, T(3), want.data());
    dt::backend_extremum_all_backward(thrust, in.data(), count, value, T(3), got.data());
    CHECK(first_difference(got, want) == -1);
  };
  for (shape s : shapes) {
    for (bool nan : {false, true}) {
      check(float{}, s, nan);
      check(double{}, s, nan);
    }
  }

  SECTION("ties of a full maximum split the gradient") {
    std::vector<double> const in = {1, 4, 2, 4, 4, 0};
    std::vector<double> dx(6, -1);
    dt::backend_extremum_all_backward(thrust, in.data(), 6, 4.0, 3.0, dx.data());
    CHECK(dx == std::vector<double>{0, 1, 0, 1, 1, 0});
  }
}

TEMPLATE_TEST_CASE("thrust kernels: softmax, log_softmax and their backward passes agree with the CPU backend",
                   "[backends][thrust][softmax]", THRUST_KERNELS_TEST_TAGS) {
  TestType const thrust{};
  auto check = [&](auto zero, shape s) {
    using T = decltype(zero);
    INFO(describe(s));
    index_t const count = s.outer * s.n * s.inner;
    auto const in = random_values<T>(count, -20, 20);
    auto const g = random_values<T>(count);
    auto y = poisoned<T>(count);
    auto got = poisoned<T>(count);
    auto want = poisoned<T>(count);

    dt::backend_softmax(dt::cpu{}, in.data(), want.data(), s.outer, s.n, s.inner);
    dt::backend_softmax(thrust, in.data(), got.data(), s.outer, s.n, s.inner);
    CHECK(first_far(got, want) == -1);
    y = want;
    dt::backend_softmax_backward(dt::cpu{}, y.data(), g.data(), want.data(), s.outer, s.n, s.inner);
    dt::backend_softmax_backward(thrust, y.data(), g.data(), got.data(), s.outer, s.n, s.inner);
    CHECK(first_far(got, want) == -1);

    dt::backend_log_softmax(dt::cpu{}, in.data(), want.data(), s.outer, s.n, s.inner);
    dt::backend_log_softmax(thrust, in.data(), got.data(), s.outer, s.n, s.inner);
    CHECK(first_far(got, want) == -1);
    y = want;
    dt::backend_log_softmax_backward(dt::cpu{}, y.data(), g.data(), want.data(), s.outer, s.n, s.inner);
    dt::backend_log_softmax_backward(thrust, y.data(), g.data(), got.data(), s.outer, s.n, s.inner);
    CHECK(first_far(got, want) == -1);
  };
  for (shape s : shapes) {
    check(float{}, s);
    check(double{}, s);
  }

  SECTION("an empty dim writes nothing") {
    std::vector<float> const in(1, 1.0f);
    std::vector<float> out(1, 7.0f);
    dt::backend_softmax(thrust, in.data(), out.data(), 2, 0, 3);
    dt::backend_log_softmax_backward(thrust, in.data(), in.data(), out.data(), 2, 0, 3);
    CHECK(out[0] == 7.0f);
  }

  SECTION("large logits do not overflow") {
    std::vector<float> const in = {1000.0f, 1000.0f};
    std::vector<float> out(2, 0.0f);
    dt::backend_softmax(thrust, in.data(), out.data(), 1, 2, 1);
    CHECK(out[0] == Approx(0.5f));
    CHECK(out[1] == Approx(0.5f));
  }
}

TEMPLATE_TEST_CASE("thrust kernels: masked softmax, its backward pass and the sequence mask agree with the CPU backend",
                   "[backends][thrust][softmax]", THRUST_KERNELS_TEST_TAGS) {
  TestType const thrust{};
  auto check = [&](auto zero, auto len_zero, shape s, index_t repeat) {
    using T = decltype(zero);
    using L = decltype(len_zero);
    INFO(describe(s) << ", repeat " << repeat);
    index_t const count = s.outer * s.n * s.inner;
    index_t const rows = s.outer * s.inner;
    auto const lengths = random_lengths<L>(rows / repeat, s.n);
    auto const in = random_values<T>(count, -10, 10);
    auto const g = random_values<T>(count);
    auto got = poisoned<T>(count);
    auto want = poisoned<T>(count);
    T const masked = T(-1e6);

    dt::backend_masked_softmax(dt::cpu{}, in.data(), want.data(), s.outer, s.n, s.inner, lengths.data(), repeat,
                               masked);
    dt::backend_masked_softmax(thrust, in.data(), got.data(), s.outer, s.n, s.inner, lengths.data(), repeat, masked);
    CHECK(first_far(got, want) == -1);
    auto const y = want;
    dt::backend_masked_softmax_backward(dt::cpu{}, y.data(), g.data(), want.data(), s.outer, s.n, s.inner,
                                        lengths.data(), repeat);
    dt::backend_masked_softmax_backward(thrust, y.data(), g.data(), got.data(), s.outer, s.n, s.inner,
                                        lengths.data(), repeat);
    CHECK(first_far(got, want) == -1);

    dt::backend_sequence_mask(dt::cpu{}, in.data(), want.data(), s.outer, s.n, s.inner, lengths.data(), repeat,
                              T(-7));
    dt::backend_sequence_mask(thrust, in.data(), got.data(), s.outer, s.n, s.inner, lengths.data(), repeat, T(-7));
    CHECK(first_difference(got, want) == -1);
  };
  for (shape s : shapes) {
    index_t const rows = s.outer * s.inner;
    for (index_t repeat : {index_t{1}, s.inner, rows}) {
      if (repeat <= 0 || rows % repeat != 0) continue;
      check(float{}, std::int64_t{}, s, repeat);
      check(double{}, std::int32_t{}, s, repeat);
    }
  }

  SECTION("a length of 0 gives a uniform row, a length of n the plain softmax") {
    std::vector<float> const in = {1, 2, 3, 4, 5, 6};
    std::vector<std::int64_t> const lengths = {0, 3};
    std::vector<float> out(6, 0);
    dt::backend_masked_softmax(thrust, in.data(), out.data(), 2, 3, 1, lengths.data(), 1, -1e6f);
    for (int j = 0; j < 3; ++j) CHECK(out[static_cast<std::size_t>(j)] == Approx(1.0f / 3));
    std::vector<float> plain(3, 0);
    dt::backend_softmax(thrust, in.data() + 3, plain.data(), 1, 3, 1);
    for (std::size_t j = 0; j < 3; ++j) CHECK(out[3 + j] == Approx(plain[j]));
  }
}

TEMPLATE_TEST_CASE("thrust kernels: first_invalid_length finds the first length outside [0, limit]",
                   "[backends][thrust][softmax]", THRUST_KERNELS_TEST_TAGS) {
  TestType const thrust{};
  std::vector<std::int64_t> const valid = {0, 3, 5, 5, 1};
  CHECK(dt::backend_first_invalid_length(thrust, valid.data(), 5, 5) == -1);
  CHECK(dt::backend_first_invalid_length(thrust, valid.data(), 5, 4) == 2);
  CHECK(dt::backend_first_invalid_length(thrust, valid.data(), 0, 0) == -1);
  std::vector<std::int32_t> const negative = {2, 1, -1, 7};
  CHECK(dt::backend_first_invalid_length(thrust, negative.data(), 4, 3) == 2);
  CHECK(dt::backend_first_invalid_length(thrust, negative.data(), 2, 3) == -1);
  // Against the CPU backend on random lengths, some invalid.
  for (index_t limit : {index_t{0}, index_t{3}, index_t{50}}) {
    auto const lengths = random_values<std::int64_t>(1000, -1, static_cast<double>(limit) + 40);
    for (index_t count : {index_t{1}, index_t{10}, index_t{1000}}) {
      CHECK(dt::backend_first_invalid_length(thrust, lengths.data(), count, limit) ==
            dt::backend_first_invalid_length(dt::cpu{}, lengths.data(), count, limit));
    }
  }
}

TEMPLATE_TEST_CASE("thrust kernels: cross-entropy and its backward pass agree with the CPU backend",
                   "[backends][thrust][cross_entropy]", THRUST_KERNELS_TEST_TAGS) {
  TestType const thrust{};
  auto check = [&](auto zero, auto label_zero, shape s) {
    using T = decltype(zero);
    using L = decltype(label_zero);
    INFO(describe(s));
    index_t const count = s.outer * s.n * s.inner;
    index_t const lines = s.outer * s.inner;
    auto const in = random_values<T>(count, -30, 30);
    auto const labels = random_values<L>(lines, 0, static_cast<double>(s.n - 1));
    auto const g = random_values<T>(lines);
    auto loss = poisoned<T>(lines), shift = poisoned<T>(lines), logs = poisoned<T>(lines);
    auto want_loss = poisoned<T>(lines), want_shift = poisoned<T>(lines), want_logs = poisoned<T>(lines);
    dt::backend_cross_entropy(dt::cpu{}, in.data(), labels.data(), want_loss.data(), want_shift.data(),
                              want_logs.data(), s.outer, s.n, s.inner);
    dt::backend_cross_entropy(thrust, in.data(), labels.data(), loss.data(), shift.data(), logs.data(), s.outer, s.n,
                              s.inner);
    CHECK(first_far(loss, want_loss) == -1);
    CHECK(first_difference(shift, want_shift) == -1);
    CHECK(first_far(logs, want_logs) == -1);
    for (index_t g_step : {index_t{0}, index_t{1}}) {
      auto got = poisoned<T>(count);
      auto want = poisoned<T>(count);
      dt::backend_cross_entropy_backward(dt::cpu{}, in.data(), labels.data(), want_shift.data(), want_logs.data(),
                                         g.data(), g_step, T(0.25), want.data(), s.outer, s.n, s.inner);
      dt::backend_cross_entropy_backward(thrust, in.data(), labels.data(), want_shift.data(), want_logs.data(),
                                         g.data(), g_step, T(0.25), got.data(), s.outer, s.n, s.inner);
      CHECK(first_far(got, want) == -1);
    }
  };
  for (shape s : shapes) {
    check(float{}, std::int64_t{}, s);
    check(double{}, std::int32_t{}, s);
  }

  SECTION("an empty class dim writes nothing") {
    std::vector<float> const in(1, 1.0f);
    std::vector<std::int64_t> const labels(6, 0);
    std::vector<float> out(1, 7.0f);
    dt::backend_cross_entropy(thrust, in.data(), labels.data(), out.data(), out.data(), out.data(), 2, 0, 3);
    CHECK(out[0] == 7.0f);
  }
}

TEMPLATE_TEST_CASE("thrust kernels: gather, its index check and index_add agree with the CPU backend",
                   "[backends][thrust][gather]", THRUST_KERNELS_TEST_TAGS) {
  TestType const thrust{};
  // [outer, extent, inner] sources gathered at count indices.
  struct gather_shape {
    index_t outer, extent, inner, count;
  };
  std::vector<gather_shape> const gshapes = {{1, 5, 1, 8}, {3, 4, 2, 6}, {2, 7, 5, 1}, {4, 10, 33, 40},
                                             {1, 3, 4, 0}, {0, 3, 2, 4}, {2, 1, 3, 5}};
  auto check = [&](auto zero, auto index_zero, gather_shape s) {
    using T = decltype(zero);
    using I = decltype(index_zero);
    INFO("[" << s.outer << ", " << s.extent << ", " << s.inner << "] at " << s.count << " indices");
    // Few distinct indices, so that repeats are common.
    auto const indices = random_values<I>(s.count, 0, static_cast<double>(s.extent - 1));
    CHECK(dt::backend_first_out_of_range(thrust, indices.data(), s.count, s.extent) == -1);

    auto const src = random_values<T>(s.outer * s.extent * s.inner, -50, 50);
    auto got = poisoned<T>(s.outer * s.count * s.inner);
    auto want = poisoned<T>(s.outer * s.count * s.inner);
    dt::backend_gather(dt::cpu{}, want.data(), src.data(), s.outer, s.extent, s.inner, indices.data(), s.count);
    dt::backend_gather(thrust, got.data(), src.data(), s.outer, s.extent, s.inner, indices.data(), s.count);
    CHECK(first_difference(got, want) == -1);

    // index_add adds in the order of k on both, so even float sums agree exactly.
    auto const grad = random_values<T>(s.outer * s.count * s.inner, -50, 50);
    auto acc_got = random_values<T>(s.outer * s.extent * s.inner, -5, 5);
    auto acc_want = acc_got;
    dt::backend_index_add(dt::cpu{}, acc_want.data(), grad.data(), s.outer, s.extent, s.inner, indices.data(),
                          s.count);
    dt::backend_index_add(thrust, acc_got.data(), grad.data(), s.outer, s.extent, s.inner, indices.data(), s.count);
    CHECK(first_difference(acc_got, acc_want) == -1);
  };
  for (gather_shape s : gshapes) {
    check(std::int32_t{}, std::int64_t{}, s);
    check(std::int64_t{}, std::int32_t{}, s);
    check(float{}, std::int64_t{}, s);
    check(double{}, std::int32_t{}, s);
  }

  SECTION("the index check finds the first index outside [0, extent)") {
    std::vector<std::int64_t> const indices = {0, 2, 3, -1, 9};
    CHECK(dt::backend_first_out_of_range(thrust, indices.data(), 5, 3) == 2);
    CHECK(dt::backend_first_out_of_range(thrust, indices.data(), 5, 4) == 3);
    CHECK(dt::backend_first_out_of_range(thrust, indices.data(), 3, 4) == -1);
    CHECK(dt::backend_first_out_of_range(thrust, indices.data(), 0, 4) == -1);
    std::vector<std::int32_t> const small = {1, 1, 5};
    CHECK(dt::backend_first_out_of_range(thrust, small.data(), 3, 5) == 2);
    CHECK(dt::backend_first_out_of_range(thrust, small.data(), 3, 6) == -1);
  }

  SECTION("repeated indices add up") {
    // src [1, 4, 2] at indices {1, 1, 0, 1} into dst [1, 2, 2].
    std::vector<std::int64_t> const indices = {1, 1, 0, 1};
    std::vector<std::int64_t> const src = {1, 10, 2, 20, 3, 30, 4, 40};
    std::vector<std::int64_t> dst = {0, 0, 100, 100};
    dt::backend_index_add(thrust, dst.data(), src.data(), 1, 2, 2, indices.data(), 4);
    CHECK(dst == std::vector<std::int64_t>{3, 30, 107, 170});
  }
}
