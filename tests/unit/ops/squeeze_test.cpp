#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/squeeze.hpp>
#include <dimtensor/ops/unsqueeze.hpp>

namespace dt = dimtensor;

namespace squeeze_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Score);
}  // namespace squeeze_test

using namespace squeeze_test;

TEST_CASE("squeeze removes a static dim of extent 1, as a view", "[ops][squeeze]") {
  auto x = dt::empty<float>(Batch(2), Score::fixed<1>{}, Queries(3));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto y = dt::squeeze<Score>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, Batch, Queries>>);
  CHECK(y.extents() == std::array<dt::index_t, 2>{2, 3});
  CHECK(y.storage() == x.storage());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t q = 0; q < 3; ++q) CHECK(y(Batch(b), Queries(q)) == static_cast<float>(b * 3 + q));
  y(Batch(1), Queries(0)) = 42.f;
  CHECK(x(Batch(1), Score(0), Queries(0)) == 42.f);
}

TEST_CASE("squeeze of a dynamic dim checks its extent at run time", "[ops][squeeze]") {
  auto ones = dt::ones<int>(Batch(2), Score(1));
  auto y = dt::squeeze<Score>(ones);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<int, Batch>>);
  CHECK(y(Batch(1)) == 1);

  auto three = dt::zeros<int>(Batch(2), Score(3));
  REQUIRE_THROWS_AS(dt::squeeze<Score>(three), dt::shape_error);
  REQUIRE_THROWS_WITH(dt::squeeze<Score>(three),
                      Catch::Contains("squeeze") && Catch::Contains("Score has extent 3, not 1") &&
                          Catch::Contains("[Batch=2, Score=3]"));
}

TEST_CASE("squeeze undoes unsqueeze; works on expressions and to rank 0", "[ops][squeeze]") {
  auto x = dt::empty<double>(Batch(2), Queries(3));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<double>(i) / 2;
  auto back = dt::squeeze<Score>(dt::unsqueeze<Score, 1>(x));
  STATIC_REQUIRE(std::is_same_v<decltype(back), decltype(x)>);
  CHECK(back.data() == x.data());
  CHECK(back.strides() == x.strides());

  auto e = dt::squeeze<Score>(dt::unsqueeze<Score, 2>(x) * 2.0);
  CHECK(e(Batch(1), Queries(2)) == 5.0);

  auto s = dt::full<float>(3.f, Score::fixed<1>{});
  auto r0 = dt::squeeze<Score>(s);
  STATIC_REQUIRE(std::is_same_v<decltype(r0), dt::tensor<float>>);
  CHECK(r0.item() == 3.f);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::squeeze<Score>(dt::ill_formed{})), dt::ill_formed>);
}
