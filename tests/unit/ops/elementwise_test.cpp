// Tests of ops/elementwise.hpp: every function against the C++ library, with
// scalars on either side, on float, double and integer tensors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace elementwise_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
}  // namespace elementwise_test

namespace dt = dimtensor;
using dt::index_t;
using namespace elementwise_test;

namespace {

// [Batch=3, Hidden=7] of values in [lo, hi].
template <class T>
dt::tensor<T, Batch, Hidden> sample(double lo, double hi) {
  auto t = dt::empty<T>(Batch(3), Hidden(7));
  for (index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(lo + (hi - lo) * static_cast<double>(i) / 20.0);
  return t;
}

// Largest relative error (absolute below 1) of e against ref(x) elementwise.
template <class E, class X, class Ref>
double max_error(E const& e, X const& x, Ref ref) {
  auto y = dt::eval(e);
  static_assert(std::is_same_v<typename decltype(y)::specs, typename X::specs>);
  double worst = 0;
  for (index_t i = 0; i < x.size(); ++i) {
    double const want = static_cast<double>(ref(x.data()[i]));
    double const got = static_cast<double>(y.data()[i]);
    double const err = std::fabs(got - want) / std::max(1.0, std::fabs(want));
    if (!(err <= worst)) worst = err;  // NaN counts as worst
  }
  return worst;
}

template <class T>
constexpr double tol = std::is_same_v<T, float> ? 4e-7 : 1e-15;

}  // namespace

TEMPLATE_TEST_CASE("elementwise: unary functions match std::", "[ops][elementwise]", float, double) {
  using T = TestType;
  auto x = sample<T>(-3.0, 3.0);
  auto pos = sample<T>(0.05, 9.0);
  CHECK(max_error(dt::exp(x), x, [](T v) { return std::exp(static_cast<double>(v)); }) <= tol<T>);
  CHECK(max_error(dt::log(pos), pos, [](T v) { return std::log(static_cast<double>(v)); }) <= tol<T>);
  CHECK(max_error(dt::tanh(x), x, [](T v) { return std::tanh(static_cast<double>(v)); }) <= tol<T>);
  CHECK(max_error(dt::sigmoid(x), x, [](T v) { return 1.0 / (1.0 + std::exp(-static_cast<double>(v))); }) <=
        tol<T>);
  CHECK(max_error(dt::relu(x), x, [](T v) { return v > 0 ? v : T(0); }) == 0);
  CHECK(max_error(dt::erf(x), x, [](T v) { return std::erf(static_cast<double>(v)); }) <= tol<T>);
  // GELU and SiLU as PyTorch defines them, computed in double.
  CHECK(max_error(dt::gelu(x), x, [](T v) {
          double const d = static_cast<double>(v);
          return d * 0.5 * (1.0 + std::erf(d / std::sqrt(2.0)));
        }) <= 2 * tol<T>);
  CHECK(max_error(dt::silu(x), x, [](T v) {
          double const d = static_cast<double>(v);
          return d / (1.0 + std::exp(-d));
        }) <= 2 * tol<T>);
  CHECK(max_error(dt::gelu_tanh(x), x, [](T v) {
          double const d = static_cast<double>(v);
          return 0.5 * d * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (d + 0.044715 * d * d * d)));
        }) <= 2 * tol<T>);
  CHECK(max_error(dt::sqrt(pos), pos, [](T v) { return std::sqrt(v); }) == 0);
  CHECK(max_error(dt::sin(x), x, [](T v) { return std::sin(v); }) == 0);
  CHECK(max_error(dt::cos(x), x, [](T v) { return std::cos(v); }) == 0);
  CHECK(max_error(dt::abs(x), x, [](T v) { return std::fabs(v); }) == 0);
  CHECK(max_error(dt::square(x), x, [](T v) { return v * v; }) == 0);
  CHECK(max_error(dt::neg(x), x, [](T v) { return -v; }) == 0);
  CHECK(max_error(-x, x, [](T v) { return -v; }) == 0);
  // Compositions evaluate in one pass with the same values.
  CHECK(max_error(dt::exp(-dt::square(x)), x, [](T v) { return std::exp(-static_cast<double>(v * v)); }) <= tol<T>);
  // Element types are kept.
  static_assert(std::is_same_v<typename decltype(dt::exp(x))::value_type, T>);
  static_assert(std::is_same_v<typename decltype(dt::sqrt(pos))::value_type, T>);
  // Special values go through.
  dt::tensor<T, Hidden> s{T(0), -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()};
  auto e = dt::eval(dt::exp(s));
  CHECK(e(Hidden(0)) == 1);
  CHECK(e(Hidden(1)) == 0);
  CHECK(std::isnan(e(Hidden(2))));
  auto l = dt::eval(dt::log(s));
  CHECK(std::isinf(l(Hidden(0))));
}

TEMPLATE_TEST_CASE("elementwise: binary functions with tensors and scalars", "[ops][elementwise]", float, double) {
  using T = TestType;
  auto x = sample<T>(-3.0, 3.0);
  auto y = sample<T>(0.5, 4.0);
  auto check2 = [&](auto const& e, auto ref) {
    auto r = dt::eval(e);
    static_assert(std::is_same_v<typename decltype(r)::value_type, T>);
    double worst = 0;
    for (index_t i = 0; i < x.size(); ++i) {
      double const want = static_cast<double>(ref(x.data()[i], y.data()[i]));
      double const err = std::fabs(static_cast<double>(r.data()[i]) - want) / std::max(1.0, std::fabs(want));
      if (!(err <= worst)) worst = err;
    }
    return worst;
  };
  CHECK(check2(x + y, [](T a, T b) { return a + b; }) == 0);
  CHECK(check2(x - y, [](T a, T b) { return a - b; }) == 0);
  CHECK(check2(x * y, [](T a, T b) { return a * b; }) == 0);
  CHECK(check2(x / y, [](T a, T b) { return a / b; }) == 0);
  CHECK(check2(dt::pow(y, x), [](T a, T b) { return std::pow(b, a); }) == 0);
  CHECK(check2(dt::maximum(x, y), [](T a, T b) { return std::max(a, b); }) == 0);
  CHECK(check2(dt::minimum(x, y), [](T a, T b) { return std::min(a, b); }) == 0);
  // Scalars on either side, of any arithmetic type (converted to T).
  CHECK(check2(x + 2, [](T a, T) { return a + T(2); }) == 0);
  CHECK(check2(2.5 + x, [](T a, T) { return T(2.5) + a; }) == 0);
  CHECK(check2(x - 1.5f, [](T a, T) { return a - T(1.5); }) == 0);
  CHECK(check2(1.5f - x, [](T a, T) { return T(1.5) - a; }) == 0);
  CHECK(check2(x * 0.1, [](T a, T) { return a * T(0.1); }) == 0);
  CHECK(check2(3 * x, [](T a, T) { return T(3) * a; }) == 0);
  CHECK(check2(x / 4.0, [](T a, T) { return a / T(4); }) == 0);
  CHECK(check2(1 / y, [](T, T b) { return T(1) / b; }) == 0);
  CHECK(check2(dt::pow(x, 2), [](T a, T) { return std::pow(a, T(2)); }) == 0);
  CHECK(check2(dt::pow(2.0, x), [](T a, T) { return std::pow(T(2), a); }) == 0);
  CHECK(check2(dt::maximum(x, 0), [](T a, T) { return std::max(a, T(0)); }) == 0);
  CHECK(check2(dt::minimum(0.5, x), [](T a, T) { return std::min(T(0.5), a); }) == 0);
  // Broadcasting a row against the whole tensor.
  auto row = dt::arange<T>(Hidden(7));
  auto r = dt::eval(x * row - row);
  for (index_t b = 0; b < 3; ++b)
    for (index_t h = 0; h < 7; ++h)
      CHECK(r(Batch(b), Hidden(h)) == x(Batch(b), Hidden(h)) * static_cast<T>(h) - static_cast<T>(h));
}

TEMPLATE_TEST_CASE("elementwise: integer tensors", "[ops][elementwise]", std::int32_t, std::int64_t) {
  using T = TestType;
  dt::tensor<T, Hidden> a{-7, -2, 0, 3, 9};
  dt::tensor<T, Hidden> b{2, 3, 5, -2, 4};
  auto check = [&](auto const& e, auto ref) {
    auto r = dt::eval(e);
    static_assert(std::is_same_v<typename decltype(r)::value_type, T>);
    int wrong = 0;
    for (index_t i = 0; i < 5; ++i)
      if (r.data()[i] != static_cast<T>(ref(a.data()[i], b.data()[i]))) ++wrong;
    return wrong;
  };
  CHECK(check(a + b, [](T x, T y) { return x + y; }) == 0);
  CHECK(check(a - b, [](T x, T y) { return x - y; }) == 0);
  CHECK(check(a * b, [](T x, T y) { return x * y; }) == 0);
  CHECK(check(a / b, [](T x, T y) { return x / y; }) == 0);  // truncates, like C++
  CHECK(check(a * 3, [](T x, T) { return x * 3; }) == 0);
  CHECK(check(10 - a, [](T x, T) { return 10 - x; }) == 0);
  CHECK(check(dt::abs(a), [](T x, T) { return x < 0 ? -x : x; }) == 0);
  CHECK(check(dt::relu(a), [](T x, T) { return x > 0 ? x : 0; }) == 0);
  CHECK(check(dt::square(a), [](T x, T) { return x * x; }) == 0);
  CHECK(check(-a, [](T x, T) { return -x; }) == 0);
  CHECK(check(dt::maximum(a, b), [](T x, T y) { return std::max(x, y); }) == 0);
  CHECK(check(dt::minimum(a, 1), [](T x, T) { return std::min<T>(x, 1); }) == 0);
  CHECK(check(dt::pow(b, 2), [](T, T y) { return y * y; }) == 0);
  auto lt = dt::eval(a < b);
  static_assert(std::is_same_v<typename decltype(lt)::value_type, bool>);
  CHECK(lt(Hidden(0)) == true);
  CHECK(lt(Hidden(3)) == false);
}

TEST_CASE("elementwise: comparisons give bool tensors", "[ops][elementwise]") {
  dt::tensor<float, Hidden> a{1, 2, 3, 4};
  dt::tensor<float, Hidden> b{4, 2, 1, 4};
  auto as_ints = [](auto const& e) {
    auto r = dt::eval(e);
    static_assert(std::is_same_v<typename decltype(r)::value_type, bool>);
    int bits = 0;
    for (index_t i = 0; i < 4; ++i) bits = bits * 10 + (r.data()[i] ? 1 : 0);
    return bits;
  };
  CHECK(as_ints(a < b) == 1000);
  CHECK(as_ints(a <= b) == 1101);
  CHECK(as_ints(a > b) == 10);
  CHECK(as_ints(a >= b) == 111);
  CHECK(as_ints(dt::eq(a, b)) == 101);
  CHECK(as_ints(dt::ne(a, b)) == 1010);
  CHECK(as_ints(a > 2) == 11);
  CHECK(as_ints(2.5f > a) == 1100);
  CHECK(as_ints(dt::eq(3, a)) == 10);
  CHECK(as_ints(a <= 2.0) == 1100);
  auto mixed = dt::zeros<float>(Batch(2), Hidden(4)) + a;
  auto m = dt::eval(mixed >= b);
  CHECK(m(Batch(1), Hidden(1)) == true);
  CHECK(m(Batch(1), Hidden(0)) == false);
}

TEST_CASE("elementwise: where", "[ops][elementwise]") {
  dt::tensor<double, Batch, Hidden> x{{-1, 2, -3}, {4, -5, 6}};
  auto pos = x > 0.0;
  auto w1 = dt::eval(dt::where(pos, x, -x));
  auto w2 = dt::eval(dt::where(pos, x, 0.0));
  auto w3 = dt::eval(dt::where(pos, 1.0, x));
  auto w4 = dt::eval(dt::where(pos, 1.0, 0.0));
  static_assert(std::is_same_v<typename decltype(w4)::value_type, double>);
  for (index_t b = 0; b < 2; ++b)
    for (index_t h = 0; h < 3; ++h) {
      double const v = x(Batch(b), Hidden(h));
      CHECK(w1(Batch(b), Hidden(h)) == std::fabs(v));
      CHECK(w2(Batch(b), Hidden(h)) == (v > 0 ? v : 0.0));
      CHECK(w3(Batch(b), Hidden(h)) == (v > 0 ? 1.0 : v));
      CHECK(w4(Batch(b), Hidden(h)) == (v > 0 ? 1.0 : 0.0));
    }
  // The condition broadcasts like any operand: a [Hidden] mask over [Batch, Hidden].
  dt::tensor<bool, Hidden> keep{true, false, true};
  auto w5 = dt::eval(dt::where(keep, x, 100.0));
  CHECK(w5(Batch(1), Hidden(1)) == 100.0);
  CHECK(w5(Batch(1), Hidden(2)) == 6.0);
  dt::tensor<bool, Hidden> bad{true, false};
  REQUIRE_THROWS_AS(dt::where(bad, x, 0.0), dt::shape_error);
  REQUIRE_THROWS_WITH(dt::where(bad, x, 0.0), Catch::StartsWith("where:") && Catch::Contains("Hidden: 2") &&
                                                   Catch::Contains("3"));
  // Integer values with an integer scalar.
  dt::tensor<std::int32_t, Hidden> n{5, -6, 7};
  auto w6 = dt::eval(dt::where(n > 0, n, 0));
  CHECK(w6(Hidden(1)) == 0);
  CHECK(w6(Hidden(2)) == 7);
}

TEST_CASE("elementwise: cast", "[ops][elementwise]") {
  dt::tensor<float, Hidden> f{-2.7f, -0.5f, 0.0f, 1.9f};
  auto i = dt::eval(dt::cast<std::int32_t>(f));
  static_assert(std::is_same_v<typename decltype(i)::value_type, std::int32_t>);
  CHECK(i(Hidden(0)) == -2);
  CHECK(i(Hidden(3)) == 1);
  auto d = dt::eval(dt::cast<double>(f));
  CHECK(d(Hidden(0)) == static_cast<double>(-2.7f));
  auto b = dt::eval(dt::cast<bool>(f));
  CHECK(b(Hidden(1)) == true);
  CHECK(b(Hidden(2)) == false);
  auto back = dt::eval(dt::cast<float>(f > 0.0f) * 2.0f);
  CHECK(back(Hidden(3)) == 2.0f);
  CHECK(back(Hidden(0)) == 0.0f);
  auto n = dt::eval(dt::cast<float>(dt::arange<std::int64_t>(Hidden(3))) / 2.0f);
  CHECK(n(Hidden(1)) == 0.5f);
}

TEST_CASE("elementwise: cast to an integer type names an element it cannot hold", "[ops][elementwise]") {
  // NaN to int64 is undefined behaviour in C++ (UBSan: float-cast-overflow).
  dt::tensor<float, Hidden> const nan_first{std::nanf(""), 3.f};
  REQUIRE_THROWS_AS(dt::cast<std::int64_t>(nan_first), dt::value_error);
  REQUIRE_THROWS_WITH(dt::cast<std::int64_t>(nan_first),
                      "cast<int64>: element 0 (row-major) of [Hidden=2]: nan is not representable in int64 (it is "
                      "NaN, infinite or out of range)");
  dt::tensor<double, Batch, Hidden> const big{{1.0, 2.0}, {-3e9, 4.0}};
  REQUIRE_THROWS_WITH(dt::cast<std::int32_t>(big),
                      Catch::StartsWith("cast<int32>: element 2 (row-major) of [Batch=2, Hidden=2]: -3000000000 is "
                                        "not representable in int32"));
  CHECK(dt::eval(dt::cast<std::int64_t>(big))(Batch(1), Hidden(0)) == -3000000000);
  dt::tensor<float, Hidden> const inf{1.f, -std::numeric_limits<float>::infinity()};
  REQUIRE_THROWS_WITH(dt::cast<std::int32_t>(inf * 2.0f), Catch::Contains("element 1") && Catch::Contains("-inf"));
  // A view is checked in its own order.
  dt::tensor<float, Batch, Hidden> const m{{1.f, 5e9f}, {3.f, 4.f}};
  REQUIRE_THROWS_WITH(
      dt::cast<std::int32_t>(dt::transpose<Batch, Hidden>(m)),
      Catch::StartsWith("cast<int32>: element 2 (row-major) of [Hidden=2, Batch=2]: 5000000000 is not"));
  // The boundaries: the truncated value must fit.
  dt::tensor<double, Hidden> const edges{2147483647.9, -2147483648.9};
  auto const e = dt::eval(dt::cast<std::int32_t>(edges));
  CHECK(e(Hidden(0)) == 2147483647);
  CHECK(e(Hidden(1)) == -2147483648);
  dt::tensor<double, Hidden> const past{2147483648.0};
  REQUIRE_THROWS_AS(dt::cast<std::int32_t>(past), dt::value_error);
  // int64 to int32: out of range is an error too (it would wrap).
  dt::tensor<std::int64_t, Hidden> const wide{1, std::int64_t{1} << 31};
  REQUIRE_THROWS_WITH(dt::cast<std::int32_t>(wide),
                      Catch::StartsWith("cast<int32>: element 1 (row-major) of [Hidden=2]: 2147483648 is not "
                                        "representable in int32 (out of range)"));
  // Casts that cannot fail stay lazy: no evaluation, an expression node.
  static_assert(!dt::is_tensor_v<decltype(dt::cast<double>(nan_first))>);
  static_assert(!dt::is_tensor_v<decltype(dt::cast<float>(wide))>);
}

TEST_CASE("elementwise: shape errors name the operation", "[ops][elementwise]") {
  auto a = dt::ones<float>(Batch(2), Hidden(3));
  auto b = dt::ones<float>(Batch(2), Hidden(4));
  REQUIRE_THROWS_WITH(a + b, "operator+: extent mismatch for dimension Hidden: 3 (left) vs 4 (right)");
  REQUIRE_THROWS_WITH(a - b, Catch::StartsWith("operator-:"));
  REQUIRE_THROWS_WITH(a * b, Catch::StartsWith("operator*:"));
  REQUIRE_THROWS_WITH(a / b, Catch::StartsWith("operator/:"));
  REQUIRE_THROWS_WITH(dt::pow(a, b), Catch::StartsWith("pow:"));
  REQUIRE_THROWS_WITH(dt::minimum(a, b), Catch::StartsWith("minimum:"));
  REQUIRE_THROWS_WITH(a < b, Catch::StartsWith("operator<:"));
  REQUIRE_THROWS_WITH(dt::eq(a, b), Catch::StartsWith("eq:"));
  REQUIRE_THROWS_WITH(dt::ne(a, b), Catch::StartsWith("ne:"));
  // A bad pair deep in an expression is reported when that node is built.
  REQUIRE_THROWS_WITH(dt::exp(a) * 2.0f + dt::tanh(b), Catch::StartsWith("operator+:") && Catch::Contains("Hidden"));
}

TEST_CASE("elementwise: a large tensor (threaded loop) matches elementwise references", "[ops][elementwise]") {
  constexpr index_t nb = 5, nh = 9001;  // 45005 elements > parallel_grain
  auto x = dt::empty<float>(Batch(nb), Hidden(nh));
  for (index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>((i * 7919) % 2001 - 1000) * 0.01f;
  auto y = dt::eval(dt::sigmoid(x) * dt::tanh(x) + dt::relu(x));
  auto bias = dt::arange<float>(Hidden(nh));
  auto z = dt::eval(dt::maximum(x, 0.0f) - bias);
  index_t wrong = 0;
  for (index_t b = 0; b < nb; ++b)
    for (index_t h = 0; h < nh; ++h) {
      double const v = x(Batch(b), Hidden(h));
      double const want = std::tanh(v) / (1.0 + std::exp(-v)) + std::max(v, 0.0);
      if (std::fabs(y(Batch(b), Hidden(h)) - want) > 1e-6 * std::max(1.0, std::fabs(want))) ++wrong;
      if (z(Batch(b), Hidden(h)) != std::max(static_cast<float>(v), 0.0f) - static_cast<float>(h)) ++wrong;
    }
  CHECK(wrong == 0);
}
