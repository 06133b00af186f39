#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace dt = dimtensor;

namespace transpose_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
}  // namespace transpose_test

using namespace transpose_test;

TEST_CASE("transpose swaps two dims, as a view", "[ops][transpose]") {
  auto x = dt::empty<float>(Batch(2), KVPairs(3), Hidden::fixed<4>{});
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto y = dt::transpose<KVPairs, Hidden>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, Batch, Hidden::fixed<4>, KVPairs>>);
  CHECK(y.extents() == std::array<dt::index_t, 3>{2, 4, 3});
  CHECK(y.strides() == std::array<dt::index_t, 3>{12, 1, 4});
  CHECK_FALSE(y.is_contiguous());
  CHECK(y.storage() == x.storage());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t k = 0; k < 3; ++k)
      for (dt::index_t h = 0; h < 4; ++h)
        CHECK(y(Batch(b), Hidden(h), KVPairs(k)) == static_cast<float>(b * 12 + k * 4 + h));

  // The order of A and B does not matter; outer dims swap too.
  auto z = dt::transpose<KVPairs, Batch>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(z), dt::tensor<float, KVPairs, Batch, Hidden::fixed<4>>>);
  CHECK(z(KVPairs(2), Batch(1), Hidden(3)) == static_cast<float>(1 * 12 + 2 * 4 + 3));

  y(Batch(1), Hidden(0), KVPairs(2)) = -5.f;
  CHECK(x(Batch(1), KVPairs(2), Hidden(0)) == -5.f);
}

TEST_CASE("transpose twice is the identity; clone makes it row-major", "[ops][transpose]") {
  auto x = dt::empty<double>(KVPairs(3), Hidden(2));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<double>(i * i);
  auto back = dt::transpose<KVPairs, Hidden>(dt::transpose<KVPairs, Hidden>(x));
  STATIC_REQUIRE(std::is_same_v<decltype(back), decltype(x)>);
  CHECK(back.strides() == x.strides());
  CHECK(back.data() == x.data());

  auto c = dt::transpose<Hidden, KVPairs>(x).clone();
  CHECK(c.is_contiguous());
  // [[0, 1], [4, 9], [16, 25]]ᵀ = [[0, 4, 16], [1, 9, 25]]
  double const want[] = {0, 4, 16, 1, 9, 25};
  for (int i = 0; i < 6; ++i) CHECK(c.data()[i] == want[i]);
}

TEST_CASE("transpose of an expression and of ill_formed", "[ops][transpose]") {
  auto x = dt::ones<float>(KVPairs(2), Hidden(3));
  auto y = dt::transpose<KVPairs, Hidden>(x * 3.f);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, Hidden, KVPairs>>);
  CHECK(y.extents() == std::array<dt::index_t, 2>{3, 2});
  CHECK(y(Hidden(2), KVPairs(1)) == 3.f);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::transpose<KVPairs, Hidden>(dt::ill_formed{})), dt::ill_formed>);
}
