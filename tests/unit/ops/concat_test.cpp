#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/transpose.hpp>

#include "unit/support/gradcheck.hpp"

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

namespace concat_test {
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(DecIn);
}  // namespace concat_test

TEST_CASE("concat_as joins different feature dims into a named dim of the summed extent", "[ops][concat]") {
  // d2l's decoder input: torch.cat((context, x), dim=-1).
  auto context = dt::empty<float>(Batch(2), Steps(1), Hidden(4));
  auto x = dt::empty<float>(Batch(2), Steps(1), Embed(3));
  iota(context, 0.f);
  iota(x, 100.f);
  auto const joined = dt::concat_as<DecIn, Hidden, Embed>(context, x);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(joined)>, dt::tensor<float, Batch, Steps, DecIn>>);
  REQUIRE(joined.extents() == std::array<dt::index_t, 3>{2, 1, 7});
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t h = 0; h < 4; ++h) CHECK(joined(Batch(b), Steps(0), DecIn(h)) == context(Batch(b), Steps(0), Hidden(h)));
    for (dt::index_t e = 0; e < 3; ++e) CHECK(joined(Batch(b), Steps(0), DecIn(4 + e)) == x(Batch(b), Steps(0), Embed(e)));
  }
  // Static extents give a static sum; an operand may already have Into.
  auto const a = dt::ones<double>(Batch(2), Hidden::fixed<4>{});
  auto const b = dt::zeros<double>(Batch(2), Embed::fixed<3>{});
  auto const c = dt::zeros<double>(Batch(2), DecIn::fixed<1>{});
  auto const three = dt::concat_as<DecIn, Hidden, Embed, DecIn>(a, b, c);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(three)>, dt::tensor<double, Batch, DecIn::fixed<8>>>);
  CHECK(three(Batch(1), DecIn(3)) == 1.0);
  CHECK(three(Batch(1), DecIn(4)) == 0.0);
  // Expressions are evaluated first.
  auto const lazy = dt::concat_as<DecIn, Hidden, Embed>(a * 2.0, b + 1.0);
  CHECK(lazy(Batch(0), DecIn(0)) == 2.0);
  CHECK(lazy(Batch(0), DecIn(6)) == 1.0);
}

TEST_CASE("concat_as: each operand's gradient is its part, under its own dim", "[ops][concat][autograd]") {
  auto context = test_support::uniform<dt::tensor<double, Batch, Hidden>>({2, 4}, 3);
  auto x = test_support::uniform<dt::tensor<double, Batch, Embed>>({2, 3}, 4);
  test_support::check_gradients([](auto const& c, auto const& e) { return dt::concat_as<DecIn, Hidden, Embed>(c, e); },
                                context, x);
  test_support::check_gradients(
      [](auto const& c, auto const& e) { return dt::tanh(dt::concat_as<DecIn, Embed, Hidden>(e * 2.0, c)); },
      context, x);
}
