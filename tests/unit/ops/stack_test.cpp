// stack<New, Pos>(list) and concat<D>(list): run-time lists of tensors
// joined in one copy; positions, any range, gradients against finite
// differences, bad input.
#include <catch2/catch.hpp>

#include <array>
#include <list>
#include <ranges>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/stack.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
using test_support::check_gradients;
using test_support::uniform;

namespace stack_test {
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(Vocab);
using step_t = dt::tensor<float, Batch, EncSteps>;

step_t counting(dt::index_t start) {
  step_t t(dt::uninitialized, {2, 3});
  for (dt::index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>(start + i);
  return t;
}
}  // namespace stack_test

using namespace stack_test;

TEST_CASE("stack joins a list along a new dim at any position", "[ops][stack]") {
  std::vector<step_t> const steps{counting(0), counting(10), counting(20), counting(30)};

  auto const front = dt::stack<DecSteps>(steps);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(front)>, dt::tensor<float, DecSteps, Batch, EncSteps>>);
  REQUIRE(front.extents() == std::array<dt::index_t, 3>{4, 2, 3});
  auto const middle = dt::stack<DecSteps, 1>(steps);  // d2l's attention weights: [Batch, DecSteps, EncSteps]
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(middle)>, dt::tensor<float, Batch, DecSteps, EncSteps>>);
  auto const back = dt::stack<DecSteps, 2>(steps);
  REQUIRE(back.extents() == std::array<dt::index_t, 3>{2, 3, 4});
  for (dt::index_t t = 0; t < 4; ++t)
    for (dt::index_t b = 0; b < 2; ++b)
      for (dt::index_t e = 0; e < 3; ++e) {
        float const want = steps[static_cast<std::size_t>(t)](Batch(b), EncSteps(e));
        CHECK(front(DecSteps(t), Batch(b), EncSteps(e)) == want);
        CHECK(middle(Batch(b), DecSteps(t), EncSteps(e)) == want);
        CHECK(back(Batch(b), EncSteps(e), DecSteps(t)) == want);
      }
  // A copy: changing an operand afterwards leaves the result alone.
  steps[0](Batch(0), EncSteps(0)) = -1.f;
  CHECK(front(DecSteps(0), Batch(0), EncSteps(0)) == 0.f);
}

TEST_CASE("stack and concat take any range of expressions, strided views included", "[ops][stack][concat]") {
  auto const x = counting(0);
  std::array<step_t, 2> const pair{x, counting(100)};
  CHECK(dt::stack<DecSteps>(pair).extents() == std::array<dt::index_t, 3>{2, 2, 3});
  std::list<step_t> const listed{x, x, x};
  CHECK(dt::stack<DecSteps>(listed).extents()[0] == 3);
  // A lazy view producing expressions (scaled copies) and transposed operands.
  auto scaled = std::views::iota(1, 4) | std::views::transform([&](int k) { return x * static_cast<float>(k); });
  auto const s = dt::stack<DecSteps>(scaled);
  CHECK(s(DecSteps(2), Batch(1), EncSteps(2)) == 3.f * x(Batch(1), EncSteps(2)));
  std::vector<dt::tensor<float, EncSteps, Batch>> transposed{dt::transpose<Batch, EncSteps>(x)};
  auto const t = dt::stack<DecSteps, 1>(transposed);
  CHECK(t(EncSteps(2), DecSteps(0), Batch(1)) == x(Batch(1), EncSteps(2)));

  // concat of a list: d2l's torch.cat(outputs, dim=0) over decoding steps.
  std::vector<dt::tensor<float, DecSteps, Batch, Vocab>> outputs;
  for (int k = 0; k < 5; ++k)
    outputs.push_back(dt::full<float>(static_cast<float>(k), DecSteps(1), Batch(2), Vocab(3)));
  outputs.push_back(dt::full<float>(9.f, DecSteps(2), Batch(2), Vocab(3)));
  auto const cat = dt::concat<DecSteps>(outputs);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(cat)>, dt::tensor<float, DecSteps, Batch, Vocab>>);
  REQUIRE(cat.extents() == std::array<dt::index_t, 3>{7, 2, 3});
  for (dt::index_t t2 = 0; t2 < 7; ++t2) CHECK(cat(DecSteps(t2), Batch(1), Vocab(2)) == (t2 < 5 ? float(t2) : 9.f));
  // Along an inner dim, static extents of the others kept, the joined one dynamic.
  std::vector<dt::tensor<float, Batch::fixed<2>, Vocab::fixed<3>>> fixed_parts{
      dt::ones<float>(Batch::fixed<2>{}, Vocab::fixed<3>{}), dt::zeros<float>(Batch::fixed<2>{}, Vocab::fixed<3>{})};
  auto const wide = dt::concat<Vocab>(fixed_parts);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(wide)>, dt::tensor<float, Batch::fixed<2>, Vocab>>);
  CHECK(wide.extents() == std::array<dt::index_t, 2>{2, 6});
  CHECK(wide(Batch(1), Vocab(2)) == 1.f);
  CHECK(wide(Batch(1), Vocab(3)) == 0.f);
}

TEST_CASE("stack and concat of a list: empty lists and disagreeing extents are errors naming them",
          "[ops][stack][concat]") {
  std::vector<step_t> none;
  CHECK_THROWS_WITH(dt::stack<DecSteps>(none), Catch::Contains("stack: the list of tensors is empty"));
  CHECK_THROWS_WITH(dt::concat<EncSteps>(none), Catch::Contains("concat: the list of tensors is empty"));
  std::vector<step_t> mixed{counting(0), step_t(dt::uninitialized, {2, 4})};
  CHECK_THROWS_AS(dt::stack<DecSteps>(mixed), dt::shape_error);
  CHECK_THROWS_WITH(dt::stack<DecSteps>(mixed), Catch::Contains("EncSteps") && Catch::Contains("operand 1") &&
                                                    Catch::Contains("3") && Catch::Contains("4"));
  CHECK_NOTHROW(dt::concat<EncSteps>(mixed));  // the joined dim may differ
  CHECK_THROWS_WITH(dt::concat<Batch>(mixed), Catch::Contains("EncSteps") && Catch::Contains("operand 1"));
}

TEST_CASE("stack and concat of a list: each operand's gradient is its part of the result's",
          "[ops][stack][concat][autograd]") {
  using d_t = dt::tensor<double, Batch, EncSteps>;
  auto a = uniform<d_t>({2, 3}, 1);
  auto b = uniform<d_t>({2, 3}, 2);
  auto c = uniform<d_t>({2, 3}, 3);
  check_gradients(
      [](auto const& x, auto const& y, auto const& z) {
        return dt::stack<DecSteps>(std::vector{x, y, z});
      },
      a, b, c);
  check_gradients(
      [](auto const& x, auto const& y, auto const& z) {
        return dt::tanh(dt::stack<DecSteps, 1>(std::vector{x, y, z, x}));
      },
      a, b, c);
  check_gradients(
      [](auto const& x, auto const& y, auto const& z) {
        return dt::stack<DecSteps, 2>(std::vector{dt::eval(x * y), z});
      },
      a, b, c);
  check_gradients(
      [](auto const& x, auto const& y, auto const& z) {
        return dt::concat<EncSteps>(std::vector{x, y, z});
      },
      a, b, c);
  check_gradients(
      [](auto const& x, auto const& y, auto const& z) {
        return dt::exp(dt::concat<Batch>(std::vector{z, x, y, z}));
      },
      a, b, c);

  // An operand that needs no gradient gets none; the others still do.
  auto constant = uniform<d_t>({2, 3}, 4);
  a.zero_grad();
  a.requires_grad_();
  dt::sum(dt::stack<DecSteps>(std::vector{constant, a}) * 3.0).backward();
  CHECK_FALSE(constant.has_grad());
  for (dt::index_t i = 0; i < a.size(); ++i) CHECK(a.grad().data()[i] == 3.0);
}
