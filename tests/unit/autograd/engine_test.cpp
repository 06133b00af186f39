// The autograd engine: what backward() does with leaves and results, grad
// mode, accumulation, detach, retain_grad, and its errors.
#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>

namespace dt = dimtensor;

namespace {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Feat);
using matrix = dt::tensor<double, Batch, Feat>;
using fixed_row = dt::tensor<float, Feat::fixed<3>>;
}  // namespace

TEST_CASE("a gradient has exactly its value's type", "[autograd][engine]") {
  fixed_row w{1.0f, 2.0f, 3.0f};
  w.requires_grad_();
  dt::tensor<float> const l = dt::sum(w * w);
  l.backward();
  STATIC_REQUIRE(std::is_same_v<decltype(w.grad()), fixed_row>);
  auto const g = w.grad();
  CHECK(g.data()[0] == 2.0f);
  CHECK(g.data()[1] == 4.0f);
  CHECK(g.data()[2] == 6.0f);
  CHECK(w.is_leaf());
  CHECK_FALSE(l.is_leaf());
}

TEST_CASE("leaves accumulate over backward passes until zero_grad", "[autograd][engine]") {
  matrix x{{1.0, 2.0}, {3.0, 4.0}};
  x.requires_grad_();
  for (int pass = 1; pass <= 3; ++pass) {
    dt::tensor<double> const l = dt::sum(x * 3.0);
    l.backward();
    CHECK(x.grad().data()[3] == 3.0 * pass);
  }
  x.zero_grad();
  CHECK_FALSE(x.has_grad());
  REQUIRE_THROWS_WITH(x.grad(), Catch::Contains("has no gradient") && Catch::Contains("zero_grad"));
}

TEST_CASE("a copy of a handle is the same variable; detach leaves the graph", "[autograd][engine]") {
  matrix x{{1.0, 2.0}};
  x.requires_grad_();
  matrix alias = x;
  CHECK(alias.requires_grad());
  matrix const d = x.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.data() == x.data());
  dt::tensor<double> const l = dt::sum(alias * d);  // d is a constant here
  l.backward();
  CHECK(x.grad().data()[0] == 1.0);
  CHECK(x.grad().data()[1] == 2.0);
}

TEST_CASE("no_grad records nothing; enable_grad records inside it", "[autograd][engine]") {
  matrix x{{1.0, 2.0}};
  x.requires_grad_();
  {
    dt::autograd::no_grad const guard;
    CHECK_FALSE(dt::autograd::is_grad_enabled());
    matrix const y = x * 2.0;
    CHECK_FALSE(y.requires_grad());
    {
      dt::autograd::enable_grad const on;
      matrix const z = x * 2.0;
      CHECK(z.requires_grad());
    }
    CHECK_FALSE(dt::autograd::is_grad_enabled());
  }
  CHECK(dt::autograd::is_grad_enabled());
}

TEST_CASE("results keep their gradient only with retain_grad", "[autograd][engine]") {
  matrix x{{1.0, -2.0}};
  x.requires_grad_();
  matrix y = x * x;
  matrix const kept = (x * 2.0).eval();
  y.retain_grad();
  dt::tensor<double> const l = dt::sum(y + kept);
  l.backward();
  CHECK(y.grad().data()[1] == 1.0);
  CHECK_FALSE(kept.has_grad());
  REQUIRE_THROWS_WITH(kept.grad(), Catch::Contains("retain_grad"));
  CHECK(x.grad().data()[1] == Approx(2.0 * -2.0 + 2.0));
}

TEST_CASE("a diamond: the shared result gets every consumer's gradient first", "[autograd][engine]") {
  matrix x{{0.5, 1.5}};
  x.requires_grad_();
  matrix const a = dt::exp(x);
  matrix const b = a * 2.0;
  matrix const c = a * a;
  dt::tensor<double> const l = dt::sum(b + c);
  l.backward();
  for (int i = 0; i < 2; ++i) {
    double const e = std::exp(x.data()[i]);
    CHECK(x.grad().data()[i] == Approx(2.0 * e + 2.0 * e * e));
  }
}

TEST_CASE("backward's errors say what is wrong", "[autograd][engine]") {
  matrix x{{1.0, 2.0}, {3.0, 4.0}};
  SECTION("not requiring grad") {
    REQUIRE_THROWS_AS(x.backward(), dt::value_error);
    dt::tensor<double> const s = dt::sum(x);
    REQUIRE_THROWS_WITH(s.backward(), Catch::Contains("does not require grad"));
  }
  x.requires_grad_();
  matrix const y = x * 2.0;
  SECTION("non-scalar without a gradient") {
    REQUIRE_THROWS_WITH(y.backward(), Catch::Contains("[Batch=2, Feat=2]") && Catch::Contains("4 elements") &&
                                          Catch::Contains("backward(gradient)"));
  }
  SECTION("a gradient of other extents") {
    matrix const g(Batch(2), Feat(3));
    REQUIRE_THROWS_AS(y.backward(g), dt::shape_error);
    REQUIRE_THROWS_WITH(y.backward(g), Catch::Contains("Feat") && Catch::Contains("2") && Catch::Contains("3"));
  }
  SECTION("requires_grad_(false) on a result") {
    matrix r = y;
    REQUIRE_THROWS_WITH(r.requires_grad_(false), Catch::Contains("not a leaf") && Catch::Contains("detach"));
  }
  SECTION("in-place writes into a variable, outside no_grad") {
    REQUIRE_THROWS_WITH(x.fill(0.0), Catch::Contains("fill") && Catch::Contains("requires grad") &&
                                         Catch::Contains("no_grad"));
    REQUIRE_THROWS_WITH(x.assign(x * 2.0), Catch::Contains("assign"));
    matrix plain(Batch(2), Feat(2));
    REQUIRE_THROWS_WITH(plain.assign(y), Catch::Contains("the value requires grad"));
    dt::autograd::no_grad const guard;
    x.assign(x * 2.0);
    CHECK(x.data()[3] == 8.0);
  }
}

TEST_CASE("an explicit seed weights the result's elements", "[autograd][engine]") {
  matrix x{{1.0, 2.0}, {3.0, 4.0}};
  x.requires_grad_();
  matrix const y = x * x;
  y.backward(matrix{{1.0, 0.0}, {0.0, -1.0}});
  CHECK(x.grad().data()[0] == 2.0);
  CHECK(x.grad().data()[1] == 0.0);
  CHECK(x.grad().data()[3] == -8.0);
}

TEST_CASE("a long chain is freed with its result (no leak under ASan)", "[autograd][engine]") {
  dt::tensor<double, Feat> x{1.0, 2.0};
  x.requires_grad_();
  dt::tensor<double, Feat> y = x;
  for (int i = 0; i < 2000; ++i) y = y * 1.0001 + 0.0;
  dt::tensor<double> const l = dt::sum(y);
  l.backward();
  CHECK(x.grad().data()[0] == Approx(std::pow(1.0001, 2000)));
}
