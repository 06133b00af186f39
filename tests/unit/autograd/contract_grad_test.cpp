// Gradients of the contractions, contract<D> and bmm, against central finite
// differences (tests/unit/support/gradcheck.hpp): batch dims (also in other
// positions and orders), weights without batch dims, static extents, free
// dims split by batch dims (the lowering's permuted output), vector and
// rank-0 results, views and lazy operands; and the engine's contract:
// gradients of exactly the value's type, accumulation, no_grad.
#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/transpose.hpp>

#include "unit/support/gradcheck.hpp"

namespace contract_grad_test {

namespace dt = dimtensor;
using test_support::check_gradients;
using test_support::uniform;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Keys);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Out);

TEST_CASE("contract: gradients with a batch dim", "[autograd][contract]") {
  auto q = uniform<dt::tensor<double, Batch, Queries, Feat>>({2, 3, 4}, 1);
  auto k = uniform<dt::tensor<double, Batch, Keys, Feat>>({2, 5, 4}, 2);
  check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(a, b); }, q, k);

  SECTION("the batch dim in other positions, and two batch dims in other orders") {
    auto qb = uniform<dt::tensor<double, Queries, Batch, Feat>>({3, 2, 4}, 3);
    auto kb = uniform<dt::tensor<double, Batch, Feat, Keys>>({2, 4, 5}, 4);
    check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(a, b); }, qb, kb);
    auto q2 = uniform<dt::tensor<double, Batch, Heads, Queries, Feat>>({2, 2, 3, 3}, 5);
    auto k2 = uniform<dt::tensor<double, Heads, Keys, Batch, Feat>>({2, 4, 2, 3}, 6);
    check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(a, b); }, q2, k2);
  }
  SECTION("free dims split by a batch dim: the result is written through a permutation") {
    auto a = uniform<dt::tensor<double, Queries, Batch, Heads, Feat>>({3, 2, 2, 4}, 7);
    auto b = uniform<dt::tensor<double, Batch, Feat, Keys>>({2, 4, 3}, 8);
    check_gradients([](auto const& x, auto const& y) { return dt::contract<Feat>(x, y); }, a, b);
  }
  SECTION("the weights' contraction: [Batch, Queries, Keys] over Keys with [Batch, Keys, Out]") {
    auto w = uniform<dt::tensor<double, Batch, Queries, Keys>>({2, 3, 5}, 9);
    auto v = uniform<dt::tensor<double, Batch, Keys, Out>>({2, 5, 4}, 10);
    check_gradients([](auto const& x, auto const& y) { return dt::contract<Keys>(x, y); }, w, v);
  }
}

TEST_CASE("contract: a weight without batch dims gets the sum over them", "[autograd][contract]") {
  auto x = uniform<dt::tensor<double, Batch, Queries, Feat>>({2, 3, 4}, 11);
  auto w = uniform<dt::tensor<double, Out, Feat>>({5, 4}, 12);
  check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(a, b); }, x, w);
  check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(b, a); }, x, w);
}

TEST_CASE("contract: static extents", "[autograd][contract]") {
  using A = dt::tensor<double, Batch::fixed<2>, Queries, Feat::fixed<3>>;
  using B = dt::tensor<double, Feat::fixed<3>, Out::fixed<4>>;
  auto a = uniform<A>({2, 3, 3}, 13);
  auto b = uniform<B>({3, 4}, 14);
  check_gradients([](auto const& x, auto const& y) { return dt::contract<Feat>(x, y); }, a, b);
  SECTION("a batch dim static in one operand only") {
    auto c = uniform<dt::tensor<double, Batch, Feat::fixed<3>, Keys>>({2, 3, 2}, 15);
    check_gradients([](auto const& x, auto const& y) { return dt::contract<Feat>(x, y); }, a, c);
  }
}

TEST_CASE("contract: vector and rank-0 results (no free dims on a side)", "[autograd][contract]") {
  auto m = uniform<dt::tensor<double, Batch, Feat>>({3, 4}, 16);
  auto v = uniform<dt::tensor<double, Feat>>({4}, 17);
  auto u = uniform<dt::tensor<double, Feat>>({4}, 18);
  check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(a, b); }, m, v);
  check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(a, b); }, v, m);
  check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(a, b); }, v, u);
  SECTION("batch dims only, no free dims at all") {
    auto n = uniform<dt::tensor<double, Batch, Feat>>({3, 4}, 19);
    check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(a, b); }, m, n);
  }
}

TEST_CASE("contract: views and lazy operands pass the gradient on", "[autograd][contract]") {
  auto q = uniform<dt::tensor<double, Batch, Feat, Queries>>({2, 4, 3}, 20);
  auto k = uniform<dt::tensor<double, Batch, Keys, Feat>>({2, 5, 4}, 21);
  check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(dt::transpose<Feat, Queries>(a), b); },
                  q, k);
  check_gradients([](auto const& a, auto const& b) { return dt::contract<Feat>(dt::tanh(a) * 2.0, b + 1.0); }, q, k);
  SECTION("one tensor on both sides") {
    auto x = uniform<dt::tensor<double, Batch, Feat>>({3, 4}, 22);
    check_gradients([](auto const& a) { return dt::contract<Feat>(a, a); }, x);
  }
}

TEST_CASE("bmm: gradients of d2l's rank-3 product", "[autograd][bmm]") {
  auto w = uniform<dt::tensor<double, Batch, Queries, Keys>>({2, 3, 5}, 23);
  auto v = uniform<dt::tensor<double, Batch, Keys, Out>>({2, 5, 4}, 24);
  check_gradients([](auto const& a, auto const& b) { return dt::bmm(a, b); }, w, v);
  SECTION("with a transposed right operand, as in dot-product scores") {
    auto q = uniform<dt::tensor<double, Batch, Queries, Feat>>({2, 3, 4}, 25);
    auto k = uniform<dt::tensor<double, Batch, Keys, Feat>>({2, 5, 4}, 26);
    check_gradients([](auto const& a, auto const& b) { return dt::bmm(a, dt::transpose<Keys, Feat>(b)); }, q, k);
  }
}

TEST_CASE("contract and bmm: the gradient's type, accumulation, no_grad", "[autograd][contract][bmm]") {
  using A = dt::tensor<float, Batch, Queries, Feat::fixed<2>>;
  using B = dt::tensor<float, Batch, Feat::fixed<2>, Keys>;
  A a{{{1.f, 2.f}, {3.f, 4.f}}};
  B b{{{1.f, 0.f, -1.f}, {2.f, 1.f, 0.f}}};
  a.requires_grad_();
  b.requires_grad_();
  auto const c = dt::bmm(a, b);  // [1, 2, 3]
  REQUIRE(c.requires_grad());
  c.backward(decltype(c)(dt::ones<float>(Batch(1), Queries(2), Keys(3))));
  static_assert(std::is_same_v<decltype(a.grad()), A>);
  static_assert(std::is_same_v<decltype(b.grad()), B>);
  // dA = 1 · Bᵀ: each row of a gets the row sums of b; dB = Aᵀ · 1: column sums of a.
  CHECK(a.grad()(Batch(0), Queries(0), Feat(0)) == 0.f);
  CHECK(a.grad()(Batch(0), Queries(1), Feat(1)) == 3.f);
  CHECK(b.grad()(Batch(0), Feat(0), Keys(2)) == 4.f);
  CHECK(b.grad()(Batch(0), Feat(1), Keys(0)) == 6.f);

  SECTION("two backward passes add up") {
    auto const d = dt::contract<Feat>(a, b);
    d.backward(decltype(d)(dt::ones<float>(Batch(1), Queries(2), Keys(3))));
    CHECK(a.grad()(Batch(0), Queries(1), Feat(1)) == 6.f);
    CHECK(b.grad()(Batch(0), Feat(1), Keys(0)) == 12.f);
  }
  SECTION("no_grad records nothing") {
    dt::autograd::no_grad const guard;
    auto const d = dt::bmm(a, b);
    CHECK_FALSE(d.requires_grad());
    CHECK(d.is_leaf());
  }
  SECTION("an operand without requires_grad gets no gradient, the other does") {
    A x = a.detach().clone();
    auto const d = dt::bmm(x, b);
    REQUIRE(d.requires_grad());
    b.zero_grad();
    d.backward(decltype(d)(dt::ones<float>(Batch(1), Queries(2), Keys(3))));
    CHECK_FALSE(x.has_grad());
    CHECK(b.grad()(Batch(0), Feat(1), Keys(0)) == 6.f);
  }
}

TEST_CASE("contract of integers records nothing", "[autograd][contract]") {
  dt::tensor<int, Batch, Feat> a{{1, 2}, {3, 4}};
  dt::tensor<int, Feat> b{1, -1};
  auto const c = dt::contract<Feat>(a, b);
  CHECK_FALSE(c.requires_grad());
  CHECK(c(Batch(1)) == -1);
}

}  // namespace contract_grad_test
