#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string_view>

#include <dimtensor/kernel/call.hpp>

namespace dt = dimtensor;
namespace call = dt::call;

TEST_CASE("call: elementwise function objects", "[core][call]") {
  CHECK(call::negate{}(3.0f) == -3.0f);
  CHECK(call::abs{}(-2.5) == 2.5);
  CHECK(call::abs{}(std::int32_t{-7}) == 7);
  CHECK(call::relu{}(-1.0f) == 0.0f);
  CHECK(call::relu{}(2.0f) == 2.0f);
  CHECK(call::relu{}(std::int64_t{-5}) == 0);
  CHECK(call::square{}(-3) == 9);
  CHECK(call::exp{}(1.0f) == dt::math::exp(1.0f));
  CHECK(call::exp{}(std::int32_t{2}) == 7);  // e^2 = 7.39, truncated like a cast
  CHECK(call::tanh{}(0.5) == std::tanh(0.5));
  CHECK(call::sigmoid{}(std::int32_t{0}) == 0);
  CHECK(call::log{}(std::exp(2.0)) == Approx(2.0));
  CHECK(call::sqrt{}(16.0f) == 4.0f);
  CHECK(call::sin{}(0.5) == std::sin(0.5));
  CHECK(call::cos{}(0.5f) == std::cos(0.5f));
  CHECK(call::pow{}(2.0f, 10.0f) == 1024.0f);
  CHECK(call::pow{}(std::int32_t{3}, std::int32_t{4}) == 81);
  CHECK(call::maximum{}(1, 2) == 2);
  CHECK(call::minimum{}(1.5, -2.5) == -2.5);
  CHECK(call::eq{}(1, 1));
  CHECK(call::ne{}(1, 2));
  CHECK(call::less{}(1.0f, 2.0f));
  CHECK(call::less_equal{}(2, 2));
  CHECK_FALSE(call::greater{}(2, 2));
  CHECK(call::greater_equal{}(2, 2));
  CHECK(call::where{}(true, 1.0f, 2.0f) == 1.0f);
  CHECK(call::where{}(false, 1.0f, 2.0f) == 2.0f);
  CHECK(call::cast<std::int32_t>{}(2.9f) == 2);
  CHECK(call::cast<bool>{}(0.0) == false);
}

TEST_CASE("call: tags name their calls", "[core][call]") {
  STATIC_REQUIRE(call::plus::name == "operator+");
  STATIC_REQUIRE(call::erf::name == "erf");
  STATIC_REQUIRE(call::softmax::name == "softmax");
  STATIC_REQUIRE(call::element_access::name == "element access");
  STATIC_REQUIRE(call::cast<float>::name == "cast");
}

// The gradient of each function against a central difference of its value.
template <class F, int Which>
double numeric_gradient(double a, double b) {
  double const h = 1e-6;
  auto const f = [](double x, double y) {
    if constexpr (std::is_invocable_v<F, double>) return F{}(x);
    else return F{}(x, y);
  };
  if constexpr (Which == 0) return (f(a + h, b) - f(a - h, b)) / (2 * h);
  else return (f(a, b + h) - f(a, b - h)) / (2 * h);
}

// A gradient that reads the function's own value (reads::result: exp,
// tanh, sigmoid) is given it in a's place.
template <class F>
void check_unary_gradient(double a) {
  INFO(F::name << " at " << a);
  double const given = F::gradient_reads(0) == call::reads::result ? F{}(a) : a;
  CHECK(F::template gradient<0>(1.5, given, 0.0) == Approx(1.5 * numeric_gradient<F, 0>(a, 0.0)).epsilon(1e-6));
}

template <class F>
void check_binary_gradient(double a, double b) {
  INFO(F::name << " at " << a << ", " << b);
  CHECK(F::template gradient<0>(1.5, a, b) == Approx(1.5 * numeric_gradient<F, 0>(a, b)).epsilon(1e-6));
  CHECK(F::template gradient<1>(1.5, a, b) == Approx(1.5 * numeric_gradient<F, 1>(a, b)).epsilon(1e-6));
}

TEST_CASE("call: gradients against central differences", "[core][call]") {
  for (double const a : {-1.7, -0.3, 0.4, 2.2}) {
    check_unary_gradient<call::negate>(a);
    STATIC_REQUIRE(call::exp::gradient_reads(0) == call::reads::result);
    STATIC_REQUIRE(call::sigmoid::gradient_reads(0) == call::reads::result);
    STATIC_REQUIRE(call::erf::gradient_reads(0) == call::reads::a);
    check_unary_gradient<call::exp>(a);
    check_unary_gradient<call::tanh>(a);
    check_unary_gradient<call::sigmoid>(a);
    check_unary_gradient<call::sin>(a);
    check_unary_gradient<call::cos>(a);
    check_unary_gradient<call::abs>(a);
    check_unary_gradient<call::relu>(a);
    check_unary_gradient<call::square>(a);
    check_unary_gradient<call::erf>(a);
    check_unary_gradient<call::gelu>(a);
    check_unary_gradient<call::silu>(a);
    check_unary_gradient<call::gelu_tanh>(a);
    check_binary_gradient<call::plus>(a, 0.9);
    check_binary_gradient<call::minus>(a, 0.9);
    check_binary_gradient<call::multiplies>(a, 0.9);
    check_binary_gradient<call::divides>(a, 0.9);
    check_binary_gradient<call::maximum>(a, 0.9);
    check_binary_gradient<call::minimum>(a, 0.9);
  }
  for (double const a : {0.3, 1.4, 2.5}) {
    check_unary_gradient<call::log>(a);
    check_unary_gradient<call::sqrt>(a);
    check_binary_gradient<call::pow>(a, 1.7);
  }
}

TEST_CASE("call: erf is std::erf in double, its gradient 2/sqrt(pi) exp(-x^2)", "[core][call]") {
  for (double const x : {-3.0, -0.5, 0.0, 1e-3, 0.7, 2.0, 6.0}) {
    CHECK(call::erf{}(x) == std::erf(x));
    CHECK(call::erf::gradient<0>(1.0, x, 0.0) ==
          Approx(2.0 / std::sqrt(std::numbers::pi) * std::exp(-x * x)).epsilon(1e-15));
  }
}

// float's erf is the vectorizable rational approximation (kernel/math.hpp):
// within 8 ulp and 4.5e-7 of erf on every float (here: every 61st of the
// positive ones, and their negatives), exact at 0, -0, the infinities and NaN.
TEST_CASE("call: erf in float is within 8 ulp of erf everywhere", "[core][call]") {
  double worst_ulp = 0;
  double worst_abs = 0;
  for (std::uint32_t bits = 0; bits < 0x7f800000u; bits += 61) {
    float const x = std::bit_cast<float>(bits);
    for (float const v : {x, -x}) {
      double const want = std::erf(static_cast<double>(v));
      float const got = call::erf{}(v);
      float const rounded = static_cast<float>(want);
      double const ulp = static_cast<double>(std::nextafter(std::fabs(rounded), 2.0f) - std::fabs(rounded));
      double const err = std::fabs(static_cast<double>(got) - want);
      worst_abs = std::max(worst_abs, err);
      if (!(err / ulp <= worst_ulp)) worst_ulp = err / ulp;
    }
  }
  CHECK(worst_ulp <= 8.0);
  CHECK(worst_abs <= 4.5e-7);
  CHECK(std::signbit(call::erf{}(-0.0f)));
  CHECK(call::erf{}(0.0f) == 0.0f);
  CHECK(call::erf{}(std::numeric_limits<float>::infinity()) == 1.0f);
  CHECK(call::erf{}(-std::numeric_limits<float>::infinity()) == -1.0f);
  CHECK(std::isnan(call::erf{}(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("call: gelu and silu as PyTorch's, with PyTorch's gradients", "[core][call]") {
  for (double const x : {-4.0, -1.2, -0.1, 0.0, 0.3, 1.7, 5.0}) {
    double const cdf = 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
    double const pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
    CHECK(call::gelu{}(x) == Approx(x * cdf).epsilon(1e-15).margin(1e-300));
    CHECK(call::gelu::gradient<0>(2.0, x, 0.0) == Approx(2.0 * (cdf + x * pdf)).epsilon(1e-14));
    double const s = 1.0 / (1.0 + std::exp(-x));
    CHECK(call::silu{}(x) == Approx(x * s).epsilon(1e-15).margin(1e-300));
    CHECK(call::silu::gradient<0>(2.0, x, 0.0) == Approx(2.0 * s * (1.0 + x * (1.0 - s))).epsilon(1e-14));
    CHECK(call::gelu{}(static_cast<float>(x)) == Approx(x * cdf).epsilon(1e-6).margin(1e-6));
  }
  STATIC_REQUIRE(call::gelu::name == "gelu");
  STATIC_REQUIRE(call::silu::name == "silu");
}

TEST_CASE("call: gelu_tanh as PyTorch's gelu(approximate='tanh'), with its gradient", "[core][call]") {
  double const beta = std::sqrt(2.0 / std::numbers::pi);
  for (double const x : {-6.0, -1.2, -0.1, 0.0, 0.3, 1.7, 5.0}) {
    double const t = std::tanh(beta * (x + 0.044715 * x * x * x));
    CHECK(call::gelu_tanh{}(x) == Approx(0.5 * x * (1.0 + t)).epsilon(1e-15).margin(1e-300));
    // d/dx of ½ x (1 + t): ½ (1 + t) + ½ x (1 - t²) β (1 + 3 κ x²)
    double const d = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * beta * (1.0 + 3.0 * 0.044715 * x * x);
    CHECK(call::gelu_tanh::gradient<0>(2.0, x, 0.0) == Approx(2.0 * d).epsilon(1e-14).margin(1e-300));
    CHECK(call::gelu_tanh{}(static_cast<float>(x)) == Approx(0.5 * x * (1.0 + t)).epsilon(1e-6).margin(1e-6));
    // within 1e-3 of the exact form, which it approximates
    CHECK(std::abs(call::gelu_tanh{}(x) - call::gelu{}(x)) < 1e-3);
  }
  STATIC_REQUIRE(call::gelu_tanh::name == "gelu_tanh");
}

TEST_CASE("call: gradients at ties and edges follow PyTorch", "[core][call]") {
  CHECK(call::maximum::gradient<0>(2.0, 1.0, 1.0) == 1.0);  // a tie splits g
  CHECK(call::minimum::gradient<1>(2.0, 1.0, 1.0) == 1.0);
  CHECK(call::pow::gradient<0>(2.0, 0.0, 0.0) == 0.0);  // d/da a^0
  CHECK(call::pow::gradient<1>(2.0, 0.0, 3.0) == 0.0);  // d/db 0^b
  CHECK(call::where::gradient<1>(2.0, 1.0, 0.0) == 2.0);
  CHECK(call::where::gradient<2>(2.0, 1.0, 0.0) == 0.0);
  CHECK(call::where::gradient<2>(2.0, 0.0, 0.0) == 2.0);
}
