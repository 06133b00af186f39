// Gradients of the lazy elementwise functions and of broadcasting, against
// central finite differences (tests/unit/support/gradcheck.hpp).
#include <catch2/catch.hpp>

#include <dimtensor/dimtensor.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
using test_support::check_gradients;
using test_support::uniform;

namespace {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Keys);
using matrix = dt::tensor<double, Batch, Feat>;
using row = dt::tensor<double, Feat>;
}  // namespace

TEST_CASE("arithmetic: + - * / and negation", "[autograd][elementwise]") {
  auto a = uniform<matrix>({3, 4}, 1);
  auto b = uniform<matrix>({3, 4}, 2, 0.5, 2.0);
  check_gradients([](auto const& x, auto const& y) { return x + y; }, a, b);
  check_gradients([](auto const& x, auto const& y) { return x - y; }, a, b);
  check_gradients([](auto const& x, auto const& y) { return x * y; }, a, b);
  check_gradients([](auto const& x, auto const& y) { return x / y; }, a, b);
  check_gradients([](auto const& x) { return -x; }, a);
  check_gradients([](auto const& x, auto const& y) { return (x * 2.0 - y) / (y + 3.0) * x; }, a, b);
}

TEST_CASE("functions: exp log tanh sigmoid relu sqrt sin cos abs square pow", "[autograd][elementwise]") {
  auto a = uniform<matrix>({2, 5}, 3);
  auto pos = uniform<matrix>({2, 5}, 4, 0.5, 2.0);
  check_gradients([](auto const& x) { return dt::exp(x); }, a);
  check_gradients([](auto const& x) { return dt::log(x); }, pos);
  check_gradients([](auto const& x) { return dt::tanh(x); }, a);
  check_gradients([](auto const& x) { return dt::sigmoid(x); }, a);
  check_gradients([](auto const& x) { return dt::sqrt(x); }, pos);
  check_gradients([](auto const& x) { return dt::sin(x) * dt::cos(x); }, a);
  check_gradients([](auto const& x) { return dt::square(x); }, a);
  check_gradients([](auto const& x, auto const& y) { return dt::pow(x, y); }, pos, a);
  check_gradients([](auto const& x) { return dt::pow(x, 3.0); }, a);
  // Away from the kinks: |a| > 0.05 everywhere.
  auto away = uniform<matrix>({2, 5}, 5, 0.1, 1.0);
  away.data()[1] = -0.4;
  away.data()[6] = -0.9;
  check_gradients([](auto const& x) { return dt::relu(x); }, away);
  check_gradients([](auto const& x) { return dt::abs(x); }, away);
}

TEST_CASE("maximum, minimum and where route the gradient", "[autograd][elementwise]") {
  auto a = uniform<matrix>({3, 3}, 6);
  auto b = uniform<matrix>({3, 3}, 7);
  check_gradients([](auto const& x, auto const& y) { return dt::maximum(x, y); }, a, b);
  check_gradients([](auto const& x, auto const& y) { return dt::minimum(x, y); }, a, b);
  check_gradients([](auto const& x, auto const& y) { return dt::where(x > y, x * 2.0, y * y); }, a, b);

  SECTION("ties split the gradient in halves, as PyTorch does") {
    matrix x{{1.0}};
    matrix y{{1.0}};
    x.requires_grad_();
    y.requires_grad_();
    matrix const m = dt::maximum(x, y);
    m.backward();
    CHECK(x.grad().item() == 0.5);
    CHECK(y.grad().item() == 0.5);
  }
}

TEST_CASE("broadcast operands get gradients summed over what they were broadcast over", "[autograd][elementwise]") {
  auto x = uniform<matrix>({3, 4}, 8);
  auto b = uniform<row>({4}, 9);
  check_gradients([](auto const& m, auto const& v) { return dt::tanh(m * v + v); }, x, b);

  SECTION("static extent 1 inside the shape") {
    using column = dt::tensor<double, Batch, Feat::fixed<1>>;
    auto c = uniform<column>({3, 1}, 10);
    check_gradients([](auto const& m, auto const& v) { return m * v; }, x, c);
  }
  SECTION("rank 0") {
    auto s = uniform<dt::tensor<double>>({}, 11);
    check_gradients([](auto const& m, auto const& v) { return dt::exp(m * v); }, x, s);
  }
  SECTION("the additive-attention pattern: [B, Q, 1, F] + [B, 1, K, F]") {
    using qs = dt::tensor<double, Batch, Queries, Feat>;
    using ks = dt::tensor<double, Batch, Keys, Feat>;
    auto q = uniform<qs>({2, 3, 4}, 12);
    auto k = uniform<ks>({2, 5, 4}, 13);
    check_gradients(
        [](auto const& qq, auto const& kk) {
          return dt::tanh(dt::unsqueeze<Keys, 2>(qq) + dt::unsqueeze<Queries, 1>(kk));
        },
        q, k);
  }
}

TEST_CASE("one tensor used several times accumulates every use", "[autograd][elementwise]") {
  auto x = uniform<matrix>({2, 3}, 14);
  check_gradients([](auto const& m) { return m * m * m + dt::exp(m) * m; }, x);
  check_gradients(
      [](auto const& m) {
        matrix const y = m * 3.0;  // an evaluated intermediate, used twice
        return y * y + m;
      },
      x);
}

TEST_CASE("cast between float and double carries the gradient", "[autograd][elementwise]") {
  auto x = uniform<matrix>({2, 2}, 15);
  // Through float: a coarser step and tolerance.
  test_support::gradcheck_options o;
  o.step = 1e-3;
  o.atol = 1e-4;
  o.rtol = 1e-3;
  check_gradients(o, [](auto const& m) { return dt::cast<double>(dt::exp(dt::cast<float>(m))); }, x);
}
