// select<D>(x, i): one index along D, D dropped, as a view; negative
// indices from the end; gradients against finite differences; bad indices.
#include <catch2/catch.hpp>

#include <array>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/select.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
using test_support::check_gradients;
using test_support::uniform;

namespace select_test {
DIMTENSOR_DIM(Layers);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
}  // namespace select_test

using namespace select_test;

TEST_CASE("select drops the dim at an index, as a view; negative indices count from the end", "[ops][select]") {
  auto x = dt::empty<float>(Layers(3), Batch(2), Hidden(4));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);

  auto top = dt::select<Layers>(x, -1);  // d2l's hidden_state[-1]
  STATIC_REQUIRE(std::is_same_v<decltype(top), dt::tensor<float, Batch, Hidden>>);
  REQUIRE(top.extents() == std::array<dt::index_t, 2>{2, 4});
  CHECK(top.storage() == x.storage());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t h = 0; h < 4; ++h) CHECK(top(Batch(b), Hidden(h)) == x(Layers(2), Batch(b), Hidden(h)));

  auto middle = dt::select<Batch>(x, 1);
  STATIC_REQUIRE(std::is_same_v<decltype(middle), dt::tensor<float, Layers, Hidden>>);
  for (dt::index_t l = 0; l < 3; ++l)
    for (dt::index_t h = 0; h < 4; ++h) CHECK(middle(Layers(l), Hidden(h)) == x(Layers(l), Batch(1), Hidden(h)));
  CHECK(dt::select<Batch>(x, -2)(Layers(1), Hidden(3)) == x(Layers(1), Batch(0), Hidden(3)));

  // Writing through the view writes x.
  middle(Layers(0), Hidden(2)) = -5.f;
  CHECK(x(Layers(0), Batch(1), Hidden(2)) == -5.f);

  // Down to rank 0, from an expression, and from a static extent.
  auto const v = dt::select<Hidden>(dt::select<Batch>(dt::select<Layers>(x * 2.f, 2), 0), 3);
  STATIC_REQUIRE(decltype(v)::rank == 0);
  CHECK(v.item() == 2.f * x(Layers(2), Batch(0), Hidden(3)));
  auto const s = dt::ones<double>(Layers::fixed<2>{}, Hidden(3));
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(dt::select<Layers>(s, 0))>, dt::tensor<double, Hidden>>);
}

TEST_CASE("select: an index outside [-extent, extent) is a value_error naming the dim", "[ops][select]") {
  auto const x = dt::zeros<float>(Layers(2), Batch(3));
  CHECK_THROWS_AS(dt::select<Layers>(x, 2), dt::value_error);
  CHECK_THROWS_WITH(dt::select<Layers>(x, -3), Catch::Contains("select: index -3 out of range for dimension Layers") &&
                                                   Catch::Contains("extent 2"));
  CHECK_NOTHROW(dt::select<Layers>(x, -2));
  auto const empty = dt::zeros<float>(Layers(0), Batch(3));
  CHECK_THROWS_AS(dt::select<Layers>(empty, 0), dt::value_error);
  // Selecting along another dim of a tensor with no elements gives an empty view.
  auto const none = dt::zeros<float>(Layers(0), Batch(3));
  CHECK(dt::select<Batch>(none, 2).size() == 0);
}

TEST_CASE("select: the gradient is the result's at the index and zero elsewhere", "[ops][select][autograd]") {
  using x_t = dt::tensor<double, Layers, Batch, Hidden>;
  auto x = uniform<x_t>({3, 2, 4}, 7);
  check_gradients([](auto const& a) { return dt::select<Layers>(a, -1); }, x);
  check_gradients([](auto const& a) { return dt::select<Batch>(a, 0) * dt::select<Batch>(a, 1); }, x);
  check_gradients([](auto const& a) { return dt::tanh(dt::select<Hidden>(a * 3.0, 2)); }, x);

  // By hand: the selected layer gets the result's gradient, the others zero.
  x.zero_grad();
  x.requires_grad_();
  dt::sum(dt::select<Layers>(x, 1) * 2.0).backward();
  auto const g = x.grad();
  for (dt::index_t l = 0; l < 3; ++l)
    for (dt::index_t b = 0; b < 2; ++b)
      for (dt::index_t h = 0; h < 4; ++h) CHECK(g(Layers(l), Batch(b), Hidden(h)) == (l == 1 ? 2.0 : 0.0));
}
