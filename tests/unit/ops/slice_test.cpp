#include <catch2/catch.hpp>

#include <limits>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/slice.hpp>
#include <dimtensor/ops/transpose.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;

namespace slice_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Embed);
}  // namespace slice_test

using namespace slice_test;

TEST_CASE("slice takes [begin, end) along a dim, as a view", "[ops][slice]") {
  auto x = dt::empty<float>(Batch(2), Steps(5), Embed(3));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto y = dt::slice<Steps>(x, 1, 4);
  STATIC_REQUIRE(std::is_same_v<decltype(y), decltype(x)>);
  REQUIRE(y.extents() == std::array<dt::index_t, 3>{2, 3, 3});
  CHECK(y.strides() == x.strides());
  CHECK(y.storage() == x.storage());
  CHECK(y.data() == x.data() + 3);
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t s = 0; s < 3; ++s)
      for (dt::index_t e = 0; e < 3; ++e) CHECK(y(Batch(b), Steps(s), Embed(e)) == x(Batch(b), Steps(s + 1), Embed(e)));
  y(Batch(1), Steps(0), Embed(2)) = -1.f;
  CHECK(x(Batch(1), Steps(1), Embed(2)) == -1.f);

  auto c = dt::slice<Embed>(x, 2, 3).clone();
  REQUIRE(c.extents() == std::array<dt::index_t, 3>{2, 5, 1});
  for (dt::index_t i = 0; i < c.size(); ++i) CHECK(c.data()[i] == x.data()[i * 3 + 2]);
}

TEST_CASE("slice makes a static dim dynamic; the whole range; an empty range", "[ops][slice]") {
  auto x = dt::empty<int>(Batch(2), Embed::fixed<4>{});
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<int>(i);
  auto y = dt::slice<Embed>(x, 1, 3);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<int, Batch, Embed>>);
  CHECK(y(Batch(1), Embed(1)) == 6);
  auto all = dt::slice<Batch>(x, 0, 2);
  CHECK(all.data() == x.data());
  CHECK(all.extents() == x.extents());
  auto empty = dt::slice<Batch>(x, 2, 2);
  CHECK(empty.size() == 0);
  CHECK(empty.extents() == std::array<dt::index_t, 2>{0, 4});
}

TEST_CASE("slice of a strided view and of an expression", "[ops][slice]") {
  auto x = dt::empty<double>(Batch(3), Embed(4));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<double>(i);
  auto y = dt::slice<Batch>(dt::transpose<Batch, Embed>(x), 1, 3);  // [Embed, Batch=2]
  for (dt::index_t e = 0; e < 4; ++e)
    for (dt::index_t b = 0; b < 2; ++b) CHECK(y(Embed(e), Batch(b)) == x(Batch(b + 1), Embed(e)));
  auto z = dt::slice<Embed>(x * 2.0, 3, 4);
  CHECK(z(Batch(2), Embed(0)) == 22.0);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::slice<Embed>(dt::ill_formed{}, 0, 1)), dt::ill_formed>);
}

TEST_CASE("slice bounds out of range are a value_error", "[ops][slice]") {
  auto x = dt::zeros<float>(Batch(2), Steps(5));
  REQUIRE_THROWS_AS(dt::slice<Steps>(x, 2, 6), dt::value_error);
  REQUIRE_THROWS_WITH(dt::slice<Steps>(x, 2, 6),
                      Catch::Contains("slice: bounds [2, 6) out of range for dimension Steps of extent 5"));
  REQUIRE_THROWS_WITH(dt::slice<Steps>(x, 3, 2), Catch::Contains("[3, 2)") && Catch::Contains("Steps of extent 5"));
  REQUIRE_THROWS_WITH(dt::slice<Batch>(x, -1, 1), Catch::Contains("[-1, 1)") && Catch::Contains("Batch of extent 2"));
}

TEST_CASE("slice with a step takes every step-th index, as a view", "[ops][slice]") {
  auto x = dt::empty<float>(Batch(2), Steps(7));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  // d2l's positional encoding: P[:, :, 0::2] and P[:, :, 1::2].
  auto const even = dt::slice<Steps>(x, 0, 7, 2);
  auto const odd = dt::slice<Steps>(x, 1, 7, 2);
  REQUIRE(even.extents() == std::array<dt::index_t, 2>{2, 4});
  REQUIRE(odd.extents() == std::array<dt::index_t, 2>{2, 3});
  CHECK(even.storage() == x.storage());
  CHECK(even.strides() == std::array<dt::index_t, 2>{7, 2});
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t s = 0; s < 4; ++s) CHECK(even(Batch(b), Steps(s)) == x(Batch(b), Steps(2 * s)));
    for (dt::index_t s = 0; s < 3; ++s) CHECK(odd(Batch(b), Steps(s)) == x(Batch(b), Steps(2 * s + 1)));
  }
  // Writing through the view writes x; a step beyond the range keeps one index.
  odd(Batch(1), Steps(2)) = -1.f;
  CHECK(x(Batch(1), Steps(5)) == -1.f);
  auto const one = dt::slice<Steps>(x, 3, 5, 1000);
  REQUIRE(one.extents() == std::array<dt::index_t, 2>{2, 1});
  CHECK(one(Batch(1), Steps(0)) == x(Batch(1), Steps(3)));
  auto const huge = dt::slice<Steps>(x, 0, 7, std::numeric_limits<dt::index_t>::max());
  CHECK(huge.extents()[1] == 1);
  CHECK(dt::slice<Steps>(x, 4, 4, 3).extents()[1] == 0);
  // Of a strided view: every other of every third.
  auto const nested = dt::slice<Steps>(dt::slice<Steps>(x, 0, 7, 3), 0, 3, 2);
  REQUIRE(nested.extents()[1] == 2);
  CHECK(nested(Batch(0), Steps(1)) == x(Batch(0), Steps(6)));
}

TEST_CASE("slice: a step below 1 is a value_error naming the dim", "[ops][slice]") {
  auto x = dt::zeros<float>(Batch(2), Steps(5));
  REQUIRE_THROWS_WITH(dt::slice<Steps>(x, 0, 5, 0), Catch::Contains("slice: step 0 along dimension Steps"));
  REQUIRE_THROWS_AS(dt::slice<Steps>(x, 0, 5, -2), dt::value_error);
}

TEST_CASE("slice: the gradient is the result's at the sliced indices and zero elsewhere", "[ops][slice][autograd]") {
  using x_t = dt::tensor<double, Batch, Steps, Embed>;
  auto x = test_support::uniform<x_t>({2, 7, 3}, 11);
  test_support::check_gradients([](auto const& a) { return dt::slice<Steps>(a, 1, 7, 2); }, x);
  test_support::check_gradients(
      [](auto const& a) { return dt::slice<Steps>(a, 1, 7, 2) * dt::slice<Steps>(a, 0, 6, 2); }, x);
  test_support::check_gradients([](auto const& a) { return dt::tanh(dt::slice<Embed>(a * 2.0, 0, 3, 2)); }, x);
  test_support::check_gradients([](auto const& a) { return dt::slice<Steps>(a, 2, 5); }, x);
}
