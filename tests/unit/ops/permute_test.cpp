#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/permute.hpp>

namespace dt = dimtensor;

namespace permute_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
}  // namespace permute_test

using namespace permute_test;

TEST_CASE("permute reorders the dims, as a view", "[ops][permute]") {
  auto x = dt::empty<float>(Batch(2), Queries(3), Heads::fixed<4>{}, HeadFeat(5));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto y = dt::permute<Heads, Batch, HeadFeat, Queries>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, Heads::fixed<4>, Batch, HeadFeat, Queries>>);
  CHECK(y.extents() == std::array<dt::index_t, 4>{4, 2, 5, 3});
  CHECK(y.strides() == std::array<dt::index_t, 4>{5, 60, 1, 20});
  CHECK(y.storage() == x.storage());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t q = 0; q < 3; ++q)
      for (dt::index_t h = 0; h < 4; ++h)
        for (dt::index_t f = 0; f < 5; ++f)
          CHECK(y(Heads(h), Batch(b), HeadFeat(f), Queries(q)) == static_cast<float>(((b * 3 + q) * 4 + h) * 5 + f));

  // clone() writes the permuted order row-major.
  auto c = y.clone();
  dt::index_t n = 0;
  bool all = true;
  for (dt::index_t h = 0; h < 4; ++h)
    for (dt::index_t b = 0; b < 2; ++b)
      for (dt::index_t f = 0; f < 5; ++f)
        for (dt::index_t q = 0; q < 3; ++q) all = all && c.data()[n++] == static_cast<float>(((b * 3 + q) * 4 + h) * 5 + f);
  CHECK(all);
}

TEST_CASE("permute to the same order is the identity; inverse permutations compose", "[ops][permute]") {
  auto x = dt::empty<int>(Batch(2), Queries(3), Heads(4));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<int>(i);
  auto same = dt::permute<Batch, Queries, Heads>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(same), decltype(x)>);
  CHECK(same.strides() == x.strides());
  auto back = dt::permute<Batch, Queries, Heads>(dt::permute<Heads, Batch, Queries>(x));
  CHECK(back.strides() == x.strides());
  CHECK(back.data() == x.data());
}

TEST_CASE("permute of an expression and of ill_formed", "[ops][permute]") {
  auto x = dt::ones<double>(Batch(2), Queries(3));
  auto y = dt::permute<Queries, Batch>(x + 1.0);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<double, Queries, Batch>>);
  CHECK(y(Queries(2), Batch(1)) == 2.0);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::permute<Batch>(dt::ill_formed{})), dt::ill_formed>);
}
