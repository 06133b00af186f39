#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/split.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace dt = dimtensor;

namespace split_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
}  // namespace split_test

using namespace split_test;

TEST_CASE("split of a dynamic dim into Outer(n), Inner: a row-major reshape view", "[ops][split]") {
  auto x = dt::empty<float>(Batch(2), Hidden(6));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto y = dt::split<Hidden, Heads, HeadFeat>(x, Heads(3));
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, Batch, Heads, HeadFeat>>);
  CHECK(y.extents() == std::array<dt::index_t, 3>{2, 3, 2});
  CHECK(y.strides() == std::array<dt::index_t, 3>{6, 2, 1});
  CHECK(y.is_contiguous());
  CHECK(y.storage() == x.storage());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t h = 0; h < 3; ++h)
      for (dt::index_t f = 0; f < 2; ++f)
        CHECK(y(Batch(b), Heads(h), HeadFeat(f)) == x(Batch(b), Hidden(h * 2 + f)));
  y(Batch(1), Heads(2), HeadFeat(0)) = -3.f;
  CHECK(x(Batch(1), Hidden(4)) == -3.f);
}

TEST_CASE("split keeps extents static where it can", "[ops][split]") {
  auto x = dt::zeros<float>(Batch(2), Hidden::fixed<8>{});
  auto both = dt::split<Hidden, Heads, HeadFeat>(x, Heads::fixed<4>{});
  STATIC_REQUIRE(std::is_same_v<decltype(both), dt::tensor<float, Batch, Heads::fixed<4>, HeadFeat::fixed<2>>>);
  auto outer_only = dt::split<Hidden, Heads, HeadFeat>(x, Heads(2));
  STATIC_REQUIRE(std::is_same_v<decltype(outer_only), dt::tensor<float, Batch, Heads, HeadFeat>>);
  CHECK(outer_only.extents() == std::array<dt::index_t, 3>{2, 2, 4});
  auto dyn = dt::zeros<float>(Batch(2), Hidden(8));
  auto n_static = dt::split<Hidden, Heads, HeadFeat>(dyn, Heads::fixed<2>{});
  STATIC_REQUIRE(std::is_same_v<decltype(n_static), dt::tensor<float, Batch, Heads::fixed<2>, HeadFeat>>);
  CHECK(n_static.extents() == std::array<dt::index_t, 3>{2, 2, 4});
}

TEST_CASE("split of a strided dim is still a view", "[ops][split]") {
  auto x = dt::empty<int>(Hidden(6), Batch(2));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<int>(i);
  auto xt = dt::transpose<Hidden, Batch>(x);  // [Batch, Hidden], Hidden has stride 2
  auto y = dt::split<Hidden, Heads, HeadFeat>(xt, Heads(2));
  CHECK(y.strides() == std::array<dt::index_t, 3>{1, 6, 2});
  CHECK(y.data() == x.data());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t h = 0; h < 2; ++h)
      for (dt::index_t f = 0; f < 3; ++f)
        CHECK(y(Batch(b), Heads(h), HeadFeat(f)) == x(Hidden(h * 3 + f), Batch(b)));
}

TEST_CASE("split may reuse D's name for Outer, accepts expressions and ill_formed", "[ops][split]") {
  auto x = dt::ones<double>(Batch(2), Hidden(6));
  auto y = dt::split<Hidden, Hidden, HeadFeat>(x * 2.0, Hidden(2));
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<double, Batch, Hidden, HeadFeat>>);
  CHECK(y.extents() == std::array<dt::index_t, 3>{2, 2, 3});
  CHECK(y(Batch(1), Hidden(1), HeadFeat(2)) == 2.0);
  STATIC_REQUIRE(
      std::is_same_v<decltype(dt::split<Hidden, Heads, HeadFeat>(dt::ill_formed{}, Heads(2))), dt::ill_formed>);
}

TEST_CASE("split into parts that do not divide the extent is a value_error", "[ops][split]") {
  auto x = dt::zeros<float>(Batch(2), Hidden(6));
  REQUIRE_THROWS_AS((dt::split<Hidden, Heads, HeadFeat>(x, Heads(4))), dt::value_error);
  REQUIRE_THROWS_WITH((dt::split<Hidden, Heads, HeadFeat>(x, Heads(4))),
                      Catch::Contains("split: dimension Hidden of extent 6 cannot be split into Heads=4"));
  REQUIRE_THROWS_WITH((dt::split<Hidden, Heads, HeadFeat>(x, Heads(0))),
                      Catch::Contains("Hidden of extent 6") && Catch::Contains("must be positive"));
  auto s = dt::zeros<float>(Hidden::fixed<6>{});
  REQUIRE_THROWS_WITH((dt::split<Hidden, Heads, HeadFeat>(s, Heads(-2))),
                      Catch::Contains("Heads=-2") && Catch::Contains("must be positive"));
}

TEST_CASE("split by the extent of Inner: Outer gets the rest, also of an empty dim", "[ops][split]") {
  auto x = dt::empty<float>(Batch(2), Hidden(6));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto y = dt::split<Hidden, Heads, HeadFeat>(x, HeadFeat(2));
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, Batch, Heads, HeadFeat>>);
  CHECK(y.extents() == std::array<dt::index_t, 3>{2, 3, 2});
  CHECK(y.storage() == x.storage());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t h = 0; h < 3; ++h)
      for (dt::index_t f = 0; f < 2; ++f) CHECK(y(Batch(b), Heads(h), HeadFeat(f)) == x(Batch(b), Hidden(h * 2 + f)));

  auto s = dt::split<Hidden, Heads, HeadFeat>(dt::zeros<float>(Hidden::fixed<6>{}), HeadFeat::fixed<3>{});
  STATIC_REQUIRE(std::is_same_v<decltype(s), dt::tensor<float, Heads::fixed<2>, HeadFeat::fixed<3>>>);

  // An empty dim splits into Outer=0 by a known Inner extent (by an Outer count, 0 parts is an error).
  auto e = dt::split<Hidden, Heads, HeadFeat>(dt::zeros<float>(Batch(2), Hidden(0)), HeadFeat(4));
  CHECK(e.extents() == std::array<dt::index_t, 3>{2, 0, 4});
  REQUIRE_THROWS_WITH((dt::split<Hidden, Heads, HeadFeat>(x, HeadFeat(4))),
                      Catch::StartsWith("split: dimension Hidden of extent 6 cannot be split into HeadFeat=4 elements "
                                        "each (not a divisor)"));
  REQUIRE_THROWS_WITH((dt::split<Hidden, Heads, HeadFeat>(x, HeadFeat(0))),
                      Catch::Contains("HeadFeat=0 elements each (the count must be positive)"));
}
