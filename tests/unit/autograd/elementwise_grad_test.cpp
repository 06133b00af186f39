// Gradients of the lazy elementwise functions and of broadcasting, against
// central finite differences (tests/unit/support/gradcheck.hpp).
#include <cmath>
#include <cstdint>
#include <vector>

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

TEST_CASE("erf, and GELU written with it, on the CPU interpreter and through float", "[autograd][elementwise]") {
  auto a = uniform<matrix>({3, 5}, 8, -2.5, 2.5);
  check_gradients([](auto const& x) { return dt::erf(x); }, a);
  // GELU's exact form, as torch.nn.functional.gelu: x/2 (1 + erf(x/sqrt(2))).
  auto gelu = [](auto const& x) { return x * 0.5 * (dt::erf(x * M_SQRT1_2) + 1.0); };
  check_gradients(gelu, a);
  // The float interpreter (the runtime's loops) against the double one.
  auto af = dt::eval(dt::cast<float>(a)).detach().requires_grad_();
  dt::sum(gelu(af) * gelu(af)).backward();
  auto ad = a.detach().requires_grad_();
  dt::sum(gelu(ad) * gelu(ad)).backward();
  for (dt::index_t i = 0; i < a.size(); ++i) {
    CHECK(static_cast<double>(af.grad().data()[i]) == Approx(ad.grad().data()[i]).epsilon(2e-6).margin(1e-6));
  }
}

TEST_CASE("gelu, gelu_tanh and silu, built in: their own gradients", "[autograd][elementwise]") {
  auto a = uniform<matrix>({3, 5}, 9, -3.0, 3.0);
  check_gradients([](auto const& x) { return dt::gelu(x); }, a);
  check_gradients([](auto const& x) { return dt::silu(x); }, a);
  check_gradients([](auto const& x) { return dt::gelu_tanh(x); }, a);
  // The built-in GELU and the one written with erf: the same gradient.
  auto x1 = a.detach().requires_grad_();
  dt::sum(dt::gelu(x1)).backward();
  auto x2 = a.detach().requires_grad_();
  dt::sum(x2 * 0.5 * (dt::erf(x2 * M_SQRT1_2) + 1.0)).backward();
  for (dt::index_t i = 0; i < a.size(); ++i) CHECK(x1.grad().data()[i] == Approx(x2.grad().data()[i]).epsilon(1e-14));
}

// The CPU runs a program's backward pass block by block (64 to 512
// elements, each block's steps in cache): 2,100 elements make several
// whole blocks and a ragged one, which threads share.
TEST_CASE("a program's backward pass in blocks: shared, broadcast and converted leaves, scalars, where",
          "[autograd][elementwise]") {
  auto x = uniform<matrix>({3, 700}, 11, -2.0, 2.0);
  auto b = uniform<row>({700}, 12, 0.5, 1.5);
  auto const c = uniform<matrix>({3, 700}, 13);  // no gradient
  dt::tensor<std::int32_t, Batch, Feat> k({3, 700});
  for (dt::index_t i = 0; i < k.size(); ++i) k.data()[i] = static_cast<std::int32_t>(i % 7) - 3;
  auto f = [&](auto const& xx, auto const& bb) {
    return dt::where(xx > c, xx * xx * bb, dt::sin(xx) - bb) + dt::gelu(xx) / bb + xx * 3.0 -
           dt::silu(xx * bb) + xx * dt::cast<double>(k);
  };
  check_gradients(f, x, b);

  SECTION("the same gradients, to the bit, on one thread and on two") {
    // 60,000 elements: enough work for two threads
    auto xf = dt::eval(dt::cast<float>(uniform<matrix>({3, 20000}, 14, -2.0, 2.0))).detach();
    auto bf = dt::eval(dt::cast<float>(uniform<row>({20000}, 15, 0.5, 1.5))).detach();
    auto const cf = dt::eval(dt::cast<float>(uniform<matrix>({3, 20000}, 16)));
    auto g = [&](auto const& xx, auto const& bb) {
      return dt::where(xx > cf, xx * xx * bb, dt::sin(xx) - bb) + dt::gelu(xx) / bb - dt::silu(xx * bb);
    };
    std::vector<float> first;
    for (int threads : {1, 2}) {
      dt::set_num_threads(threads);
      xf.requires_grad_().zero_grad();
      bf.requires_grad_().zero_grad();
      dt::sum(g(xf, bf) * g(xf, bf)).backward();
      std::vector<float> got(xf.grad().data(), xf.grad().data() + xf.size());
      got.insert(got.end(), bf.grad().data(), bf.grad().data() + bf.size());
      if (first.empty()) {
        first = got;
      } else {
        CHECK(got == first);
      }
    }
    dt::set_num_threads(0);
  }
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

// The recorded program: leaves keep their elements, are read at the result's
// extents through their own strides, and operands of another element type
// (comparisons, masks, integer casts) are values only.
TEST_CASE("an evaluated expression's program reads its leaves as the forward pass did", "[autograd][elementwise]") {
  using tmatrix = dt::tensor<double, Feat, Batch>;
  matrix x{{1.0, -2.0, 3.0}, {0.5, 4.0, -1.5}};
  x.requires_grad_();

  SECTION("a constant leaf outlives its handle; a transposed leaf is read through its strides") {
    dt::tensor<double> loss;
    {
      tmatrix const c{{2.0, 5.0}, {-1.0, 7.0}, {3.0, 0.25}};
      auto const ct = dt::transpose<Feat, Batch>(c);  // [Batch, Feat], not contiguous
      REQUIRE_FALSE(ct.is_contiguous());
      loss = dt::sum(x * ct + 1.5);
    }  // c and its view are gone; the graph keeps their elements
    loss.backward();
    auto const g = x.grad();
    CHECK(g(Batch(0), Feat(0)) == 2.0);
    CHECK(g(Batch(0), Feat(1)) == -1.0);
    CHECK(g(Batch(0), Feat(2)) == 3.0);
    CHECK(g(Batch(1), Feat(0)) == 5.0);
    CHECK(g(Batch(1), Feat(1)) == 7.0);
    CHECK(g(Batch(1), Feat(2)) == 0.25);
  }

  SECTION("a comparison and a bool mask select the gradient; an integer cast is a value only") {
    dt::tensor<bool, Batch, Feat> const mask{{true, true, false}, {false, true, true}};
    // where(x > 0, x*x, -x) where the mask holds, else trunc(x) * x.
    auto const y = dt::eval(dt::where(mask, dt::where(x > 0.0, x * x, -x), dt::cast<double>(dt::cast<std::int32_t>(x)) * x));
    dt::sum(y).backward();
    auto const g = x.grad();
    CHECK(g(Batch(0), Feat(0)) == 2.0);   // 2x at 1
    CHECK(g(Batch(0), Feat(1)) == -1.0);  // -x at -2
    CHECK(g(Batch(0), Feat(2)) == 3.0);   // trunc(3) (the cast carries no gradient)
    CHECK(g(Batch(1), Feat(0)) == 0.0);   // trunc(0.5)
    CHECK(g(Batch(1), Feat(1)) == 8.0);   // 2x at 4
    CHECK(g(Batch(1), Feat(2)) == -1.0);  // -x at -1.5
  }

  SECTION("an inner value read by two rules, and a leaf used three times, add up in the tree's order") {
    auto const y = dt::eval(dt::tanh(x * x) * (x * x) + x);
    dt::sum(y).backward();
    auto const g = x.grad();
    for (dt::index_t b = 0; b < 2; ++b) {
      for (dt::index_t f = 0; f < 3; ++f) {
        double const v = x(Batch(b), Feat(f));
        double const t = std::tanh(v * v);
        // d/dv [tanh(v²) v² + v] = (1 - t²) 2v · v² + t · 2v + 1
        CHECK(g(Batch(b), Feat(f)) == Approx((1.0 - t * t) * 2.0 * v * v * v + t * 2.0 * v + 1.0).epsilon(1e-12));
      }
    }
  }

  SECTION("a copy hands its gradient to its source") {
    auto const t = dt::transpose<Batch, Feat>(x);  // recorded view
    auto const c = t.contiguous();                 // recorded copy
    REQUIRE(c.requires_grad());
    dt::sum(c * 2.0).backward();
    auto const g = x.grad();
    for (dt::index_t i = 0; i < g.size(); ++i) CHECK(g.data()[i] == 2.0);
  }
}

namespace {
DIMTENSOR_DIM(R1);
DIMTENSOR_DIM(R2);
DIMTENSOR_DIM(R3);
DIMTENSOR_DIM(R4);
DIMTENSOR_DIM(R5);
DIMTENSOR_DIM(R6);
DIMTENSOR_DIM(R7);
DIMTENSOR_DIM(R8);
DIMTENSOR_DIM(R9);
}  // namespace

TEST_CASE("an expression of rank 9 evaluates, and says so when it would need gradients", "[autograd][elementwise]") {
  using rank9 = dt::tensor<double, R1, R2, R3, R4, R5, R6, R7, R8, R9>;
  rank9 x(R1(1), R2(1), R3(1), R4(1), R5(1), R6(1), R7(1), R8(1), R9(3));
  x.fill(2.0);
  rank9 const y = x * 3.0;  // no gradient asked: fine at any rank
  CHECK(y.data()[2] == 6.0);
  x.requires_grad_();
  CHECK_THROWS_WITH(rank9(x * 3.0), Catch::Contains("gradients through an elementwise expression of rank 9 are not supported"));
  dt::autograd::no_grad const off;
  CHECK(rank9(x * 3.0).data()[0] == 6.0);
}

// An expression with a costly function (exp, erf, GELU…) of at least
// runtime_forward_min elements, every operand dense or a scalar, is
// evaluated by the runtime's program kernel (compiled for this CPU) instead
// of the caller's loop; the same program is what backward runs.
TEST_CASE("costly expressions evaluate in the runtime's program kernel, recorded or not", "[autograd][elementwise]") {
  namespace ad = dt::autograd::detail;
  using fmat = dt::tensor<float, Batch, Feat>;
  static_assert(ad::program_traits<decltype(dt::gelu(std::declval<fmat>()))>::costly);
  static_assert(ad::program_traits<decltype(std::declval<fmat>() * 2.0f + std::declval<fmat>())>::known);
  static_assert(!ad::program_traits<decltype(std::declval<fmat>() * 2.0f + std::declval<fmat>())>::costly);
  static_assert(!ad::program_traits<decltype(dt::where(std::declval<fmat>() > 0.0f, std::declval<fmat>(),
                                                       dt::exp(std::declval<fmat>())))>::known);
  static_assert(ad::runtime_forward_min <= 3 * 1000);

  auto xd = uniform<matrix>({3, 1000}, 21, -3.0, 3.0);
  fmat const x = dt::eval(dt::cast<float>(xd));
  auto gelu = [](auto const& v) { return v * 0.5f * (dt::erf(v * static_cast<float>(M_SQRT1_2)) + 1.0f); };
  auto expected = [&](dt::index_t i) {
    double const v = static_cast<double>(x.data()[i]);
    return 0.5 * v * (1.0 + std::erf(v * M_SQRT1_2)) + std::tanh(v);
  };
  auto f = [&](auto const& v) { return gelu(v) + dt::tanh(v); };

  SECTION("values as the caller's loop computes them, on one thread and two alike") {
    fmat const y = f(x);
    // A transposed operand is not dense at the result's extents: the
    // caller's loop evaluates it.
    auto const xt = dt::eval(dt::transpose<Batch, Feat>(x));
    fmat const y_loop = f(dt::transpose<Feat, Batch>(xt));
    dt::set_num_threads(1);
    fmat const y1 = f(x);
    dt::set_num_threads(2);
    fmat const y2 = f(x);
    dt::set_num_threads(0);
    for (dt::index_t i = 0; i < x.size(); ++i) {
      CHECK(static_cast<double>(y.data()[i]) == Approx(expected(i)).margin(2e-6));
      CHECK(y.data()[i] == Approx(y_loop.data()[i]).margin(1e-6));
      CHECK(y1.data()[i] == y2.data()[i]);
    }
    CHECK_FALSE(y.requires_grad());
  }
  SECTION("recorded: the program's gradients, in double against finite differences") {
    auto const xv = x.detach().requires_grad_();
    fmat const y = f(xv);
    REQUIRE(y.requires_grad());
    CHECK_THROWS_WITH(fmat(y).requires_grad_(false), Catch::Contains("the result of elementwise"));
    check_gradients([](auto const& v) { return v * 0.5 * (dt::erf(v * M_SQRT1_2) + 1.0) + dt::tanh(v); }, xd);
  }
}
