#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace dt = dimtensor;

namespace concat_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Embed);
}  // namespace concat_test

using namespace concat_test;

namespace {
template <class T>
void iota(T& t, float start) {
  for (dt::index_t i = 0; i < t.size(); ++i) t.data()[i] = start + static_cast<float>(i);
}
}  // namespace

TEST_CASE("concat along a middle dim", "[ops][concat]") {
  auto a = dt::empty<float>(Batch(2), Steps(3), Embed(4));
  auto b = dt::empty<float>(Batch(2), Steps(1), Embed(4));
  iota(a, 0.f);
  iota(b, 100.f);
  auto c = dt::concat<Steps>(a, b);
  STATIC_REQUIRE(std::is_same_v<decltype(c), dt::tensor<float, Batch, Steps, Embed>>);
  REQUIRE(c.extents() == std::array<dt::index_t, 3>{2, 4, 4});
  CHECK(c.is_contiguous());
  CHECK(c.storage() != a.storage());
  for (dt::index_t i = 0; i < 2; ++i)
    for (dt::index_t s = 0; s < 4; ++s)
      for (dt::index_t e = 0; e < 4; ++e)
        CHECK(c(Batch(i), Steps(s), Embed(e)) ==
              (s < 3 ? a(Batch(i), Steps(s), Embed(e)) : b(Batch(i), Steps(s - 3), Embed(e))));
}

TEST_CASE("concat of three along the first and the last dim", "[ops][concat]") {
  auto a = dt::empty<float>(Batch(1), Embed(2));
  auto b = dt::empty<float>(Batch(2), Embed(2));
  auto c = dt::empty<float>(Batch(1), Embed(2));
  iota(a, 0.f);
  iota(b, 10.f);
  iota(c, 20.f);
  auto rows = dt::concat<Batch>(a, b, c);
  REQUIRE(rows.extents() == std::array<dt::index_t, 2>{4, 2});
  float const want_rows[] = {0, 1, 10, 11, 12, 13, 20, 21};
  for (int i = 0; i < 8; ++i) CHECK(rows.data()[i] == want_rows[i]);

  auto d = dt::empty<float>(Batch(2), Embed(1));
  iota(d, 50.f);
  auto cols = dt::concat<Embed>(b, d, b);
  REQUIRE(cols.extents() == std::array<dt::index_t, 2>{2, 5});
  float const want_cols[] = {10, 11, 50, 10, 11, 12, 13, 51, 12, 13};
  for (int i = 0; i < 10; ++i) CHECK(cols.data()[i] == want_cols[i]);
}

TEST_CASE("concat keeps static extents: a static sum, static other dims", "[ops][concat]") {
  auto a = dt::zeros<double>(Batch(2), Embed::fixed<3>{});
  auto b = dt::ones<double>(Batch(2), Embed::fixed<5>{});
  auto c = dt::concat<Embed>(a, b);
  STATIC_REQUIRE(std::is_same_v<decltype(c), dt::tensor<double, Batch, Embed::fixed<8>>>);
  CHECK(c(Batch(1), Embed(2)) == 0.0);
  CHECK(c(Batch(1), Embed(3)) == 1.0);

  auto d = dt::ones<double>(Batch(2), Embed(1));
  auto e = dt::concat<Embed>(a, d);
  STATIC_REQUIRE(std::is_same_v<decltype(e), dt::tensor<double, Batch, Embed>>);
  CHECK(e.extents() == std::array<dt::index_t, 2>{2, 4});

  auto s = dt::zeros<double>(Batch::fixed<2>{}, Embed(1));
  auto f = dt::concat<Embed>(d, s);
  STATIC_REQUIRE(std::is_same_v<decltype(f), dt::tensor<double, Batch::fixed<2>, Embed>>);
  CHECK(f.extents() == std::array<dt::index_t, 2>{2, 2});
}

TEST_CASE("concat of strided views and expressions", "[ops][concat]") {
  auto a = dt::empty<float>(Embed(3), Batch(2));
  iota(a, 0.f);
  auto at = dt::transpose<Embed, Batch>(a);  // [Batch, Embed], strided
  auto b = dt::ones<float>(Batch(2), Embed(1));
  auto c = dt::concat<Embed>(at, b * 7.f);
  REQUIRE(c.extents() == std::array<dt::index_t, 2>{2, 4});
  for (dt::index_t i = 0; i < 2; ++i) {
    for (dt::index_t e = 0; e < 3; ++e) CHECK(c(Batch(i), Embed(e)) == a(Embed(e), Batch(i)));
    CHECK(c(Batch(i), Embed(3)) == 7.f);
  }
  STATIC_REQUIRE(std::is_same_v<decltype(dt::concat<Embed>(b, dt::ill_formed{})), dt::ill_formed>);
}

TEST_CASE("concat with an empty operand and an empty result", "[ops][concat]") {
  auto a = dt::ones<int>(Batch(2), Steps(0));
  auto b = dt::full<int>(3, Batch(2), Steps(2));
  auto c = dt::concat<Steps>(a, b, a);
  REQUIRE(c.extents() == std::array<dt::index_t, 2>{2, 2});
  for (dt::index_t i = 0; i < c.size(); ++i) CHECK(c.data()[i] == 3);
  auto z = dt::ones<int>(Batch(0), Steps(2));
  auto zz = dt::concat<Steps>(z, z);
  CHECK(zz.extents() == std::array<dt::index_t, 2>{0, 4});
}

TEST_CASE("concat with other dynamic extents that differ is a shape_error", "[ops][concat]") {
  auto a = dt::zeros<float>(Batch(2), Steps(3), Embed(4));
  auto b = dt::zeros<float>(Batch(2), Steps(1), Embed(5));
  REQUIRE_THROWS_AS(dt::concat<Steps>(a, b), dt::shape_error);
  REQUIRE_THROWS_WITH(dt::concat<Steps>(a, a, b),
                      Catch::Contains("concat: extent mismatch for dimension Embed: 4 (operand 0) vs 5 (operand 2)"));
}

TEST_CASE("concat of operands large enough for the threaded copy", "[ops][concat]") {
  auto a = dt::empty<float>(Batch(128), Steps(300));
  auto b = dt::empty<float>(Steps(100), Batch(128));
  iota(a, 0.f);
  iota(b, 1e6f);
  auto c = dt::concat<Steps>(a, dt::transpose<Steps, Batch>(b));
  REQUIRE(c.extents() == std::array<dt::index_t, 2>{128, 400});
  bool all = true;
  for (dt::index_t i = 0; i < 128; ++i)
    for (dt::index_t s = 0; s < 400; ++s)
      all = all && c(Batch(i), Steps(s)) == (s < 300 ? a(Batch(i), Steps(s)) : b(Steps(s - 300), Batch(i)));
  CHECK(all);
}
