#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/transpose.hpp>
#include <dimtensor/ops/unsqueeze.hpp>

namespace dt = dimtensor;

namespace unsqueeze_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

template <class T>
void iota(T& t, float start = 0) {
  for (dt::index_t i = 0; i < t.size(); ++i) t.data()[i] = start + static_cast<float>(i);
}
}  // namespace unsqueeze_test

using namespace unsqueeze_test;

TEST_CASE("unsqueeze inserts a static dim of extent 1 at any position", "[ops][unsqueeze]") {
  auto x = dt::empty<float>(Batch(2), Queries(3));
  iota(x);

  auto front = dt::unsqueeze<KVPairs, 0>(x);
  auto mid = dt::unsqueeze<KVPairs, 1>(x);
  auto back = dt::unsqueeze<KVPairs, 2>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(front), dt::tensor<float, KVPairs::fixed<1>, Batch, Queries>>);
  STATIC_REQUIRE(std::is_same_v<decltype(mid), dt::tensor<float, Batch, KVPairs::fixed<1>, Queries>>);
  STATIC_REQUIRE(std::is_same_v<decltype(back), dt::tensor<float, Batch, Queries, KVPairs::fixed<1>>>);
  CHECK(front.extents() == std::array<dt::index_t, 3>{1, 2, 3});
  CHECK(mid.extents() == std::array<dt::index_t, 3>{2, 1, 3});
  CHECK(back.extents() == std::array<dt::index_t, 3>{2, 3, 1});
  CHECK(front.is_contiguous());
  CHECK(mid.is_contiguous());
  CHECK(back.is_contiguous());

  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t q = 0; q < 3; ++q) {
      float const want = static_cast<float>(b * 3 + q);
      CHECK(front(KVPairs(0), Batch(b), Queries(q)) == want);
      CHECK(mid(Batch(b), KVPairs(0), Queries(q)) == want);
      CHECK(back(Batch(b), Queries(q), KVPairs(0)) == want);
    }
  }
}

TEST_CASE("unsqueeze is a view sharing the storage", "[ops][unsqueeze]") {
  auto x = dt::zeros<float>(Batch(2), Queries(3));
  auto y = dt::unsqueeze<KVPairs, 1>(x);
  CHECK(y.storage() == x.storage());
  CHECK(y.data() == x.data());
  x(Batch(1), Queries(2)) = 7.f;
  CHECK(y(Batch(1), KVPairs(0), Queries(2)) == 7.f);
  y(Batch(0), KVPairs(0), Queries(1)) = -1.f;
  CHECK(x(Batch(0), Queries(1)) == -1.f);
}

TEST_CASE("unsqueeze of a strided view and of an expression", "[ops][unsqueeze]") {
  auto x = dt::empty<float>(Batch(2), Queries(3));
  iota(x);
  auto xt = dt::transpose<Batch, Queries>(x);  // [Queries, Batch], strided
  auto y = dt::unsqueeze<KVPairs, 1>(xt);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, Queries, KVPairs::fixed<1>, Batch>>);
  auto z = dt::unsqueeze<KVPairs, 0>(x + x);
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t q = 0; q < 3; ++q) {
      CHECK(y(Queries(q), KVPairs(0), Batch(b)) == static_cast<float>(b * 3 + q));
      CHECK(z(KVPairs(0), Batch(b), Queries(q)) == static_cast<float>(2 * (b * 3 + q)));
    }
  }
}

TEST_CASE("unsqueeze makes operands broadcast (additive attention's features)", "[ops][unsqueeze]") {
  auto q = dt::empty<float>(Batch(2), Queries(3), Hidden(4));
  auto k = dt::empty<float>(Batch(2), KVPairs(5), Hidden(4));
  iota(q);
  iota(k, 100.f);
  dt::tensor<float, Batch, Queries, KVPairs, Hidden> f = dt::unsqueeze<KVPairs, 2>(q) + dt::unsqueeze<Queries, 1>(k);
  CHECK(f.extents() == std::array<dt::index_t, 4>{2, 3, 5, 4});
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t i = 0; i < 3; ++i)
      for (dt::index_t j = 0; j < 5; ++j)
        for (dt::index_t h = 0; h < 4; ++h)
          CHECK(f(Batch(b), Queries(i), KVPairs(j), Hidden(h)) ==
                q(Batch(b), Queries(i), Hidden(h)) + k(Batch(b), KVPairs(j), Hidden(h)));
}

TEST_CASE("unsqueeze of a rank-0 tensor and of ill_formed", "[ops][unsqueeze]") {
  dt::tensor<double> s;
  s.fill(2.5);
  auto y = dt::unsqueeze<Hidden, 0>(s);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<double, Hidden::fixed<1>>>);
  CHECK(y(Hidden(0)) == 2.5);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::unsqueeze<Hidden, 0>(dt::ill_formed{})), dt::ill_formed>);
}
