#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/slice.hpp>
#include <dimtensor/ops/transpose.hpp>

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
