#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/rename.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace dt = dimtensor;

namespace rename_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Score);
DIMTENSOR_DIM(Queries);
}  // namespace rename_test

using namespace rename_test;

TEST_CASE("rename changes a dim's name and keeps its extent, as a view", "[ops][rename]") {
  auto x = dt::empty<float>(Batch(2), Hidden::fixed<3>{});
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto y = dt::rename<Hidden, Score>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, Batch, Score::fixed<3>>>);
  CHECK(y.storage() == x.storage());
  CHECK(y.extents() == x.extents());
  CHECK(y(Batch(1), Score(2)) == 5.f);

  auto z = dt::rename<Batch, Queries>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(z), dt::tensor<float, Queries, Hidden::fixed<3>>>);
  z(Queries(0), Hidden(1)) = 9.f;
  CHECK(x(Batch(0), Hidden(1)) == 9.f);
}

TEST_CASE("rename keeps strides; renaming to itself is the identity", "[ops][rename]") {
  auto x = dt::empty<int>(Batch(2), Hidden(3));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<int>(i);
  auto y = dt::rename<Batch, Score>(dt::transpose<Batch, Hidden>(x));
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<int, Hidden, Score>>);
  CHECK(y.strides() == std::array<dt::index_t, 2>{1, 3});
  CHECK(y(Hidden(2), Score(1)) == 5);
  auto same = dt::rename<Hidden, Hidden>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(same), decltype(x)>);
  auto e = dt::rename<Hidden, Score>(x * 2);
  CHECK(e(Batch(1), Score(0)) == 6);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::rename<Hidden, Score>(dt::ill_formed{})), dt::ill_formed>);
}
