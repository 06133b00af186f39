#include <catch2/catch.hpp>

#include <cstdint>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/index_select.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace dt = dimtensor;

namespace index_select_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Picked);
}  // namespace index_select_test

using namespace index_select_test;

TEST_CASE("index_select as an embedding lookup", "[ops][index_select]") {
  auto weight = dt::empty<float>(Vocab(5), Embed::fixed<3>{});
  for (dt::index_t i = 0; i < weight.size(); ++i) weight.data()[i] = static_cast<float>(i) + 0.25f;
  dt::tensor<std::int64_t, Batch, Steps> tokens{{4, 0, 2}, {1, 1, 3}};
  auto out = dt::index_select<Vocab>(weight, tokens);
  STATIC_REQUIRE(std::is_same_v<decltype(out), dt::tensor<float, Batch, Steps, Embed::fixed<3>>>);
  REQUIRE(out.extents() == std::array<dt::index_t, 3>{2, 3, 3});
  CHECK(out.storage() != weight.storage());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t s = 0; s < 3; ++s)
      for (dt::index_t e = 0; e < 3; ++e)
        CHECK(out(Batch(b), Steps(s), Embed(e)) == weight(Vocab(tokens(Batch(b), Steps(s))), Embed(e)));
}

TEST_CASE("index_select along an inner dim with int32 indices", "[ops][index_select]") {
  auto x = dt::empty<double>(Batch(2), Vocab(4), Embed(3));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<double>(i);
  dt::tensor<std::int32_t, Picked> idx{3, 3, 0};
  auto y = dt::index_select<Vocab>(x, idx);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<double, Batch, Picked, Embed>>);
  REQUIRE(y.extents() == std::array<dt::index_t, 3>{2, 3, 3});
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t p = 0; p < 3; ++p)
      for (dt::index_t e = 0; e < 3; ++e) CHECK(y(Batch(b), Picked(p), Embed(e)) == x(Batch(b), Vocab(idx(Picked(p))), Embed(e)));

  auto last = dt::index_select<Embed>(x, idx * 0 + 2);  // indices from an expression
  STATIC_REQUIRE(std::is_same_v<decltype(last), dt::tensor<double, Batch, Vocab, Picked>>);
  CHECK(last(Batch(1), Vocab(3), Picked(1)) == x(Batch(1), Vocab(3), Embed(2)));
}

TEST_CASE("index_select with rank-0 indices drops the dim; with D's own name it reorders", "[ops][index_select]") {
  auto x = dt::empty<float>(Vocab(3), Embed(2));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  dt::tensor<std::int64_t> one;
  one.fill(2);
  auto row = dt::index_select<Vocab>(x, one);
  STATIC_REQUIRE(std::is_same_v<decltype(row), dt::tensor<float, Embed>>);
  CHECK(row(Embed(0)) == 4.f);
  CHECK(row(Embed(1)) == 5.f);

  dt::tensor<std::int64_t, Vocab> perm{2, 0, 1};
  auto p = dt::index_select<Vocab>(x, perm);
  STATIC_REQUIRE(std::is_same_v<decltype(p), decltype(x)>);
  float const want[] = {4, 5, 0, 1, 2, 3};
  for (int i = 0; i < 6; ++i) CHECK(p.data()[i] == want[i]);
}

TEST_CASE("index_select of a strided tensor and of expressions", "[ops][index_select]") {
  auto x = dt::empty<float>(Embed(2), Vocab(3));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  dt::tensor<std::int64_t, Batch> idx{1, 2};
  auto y = dt::index_select<Vocab>(dt::transpose<Embed, Vocab>(x), idx);  // [Batch, Embed]
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, Batch, Embed>>);
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t e = 0; e < 2; ++e) CHECK(y(Batch(b), Embed(e)) == x(Embed(e), Vocab(idx(Batch(b)))));
  auto z = dt::index_select<Vocab>(x + 1.f, idx);
  CHECK(z(Embed(1), Batch(1)) == x(Embed(1), Vocab(2)) + 1.f);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::index_select<Vocab>(x, dt::ill_formed{})), dt::ill_formed>);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::index_select<Vocab>(dt::ill_formed{}, idx)), dt::ill_formed>);
}

TEST_CASE("index_select with an index out of range is a value_error", "[ops][index_select]") {
  auto weight = dt::zeros<float>(Vocab(5), Embed(2));
  dt::tensor<std::int64_t, Batch> too_big{1, 5};
  REQUIRE_THROWS_AS(dt::index_select<Vocab>(weight, too_big), dt::value_error);
  REQUIRE_THROWS_WITH(dt::index_select<Vocab>(weight, too_big),
                      Catch::Contains("index_select: index 5 out of range for dimension Vocab of extent 5"));
  dt::tensor<std::int32_t, Batch> negative{0, -1};
  REQUIRE_THROWS_WITH(dt::index_select<Vocab>(weight, negative),
                      Catch::Contains("index -1 out of range for dimension Vocab of extent 5"));
}

TEST_CASE("index_select large enough for the threaded gather", "[ops][index_select]") {
  auto weight = dt::empty<float>(Vocab(1000), Embed(64));
  for (dt::index_t i = 0; i < weight.size(); ++i) weight.data()[i] = static_cast<float>(i);
  auto tokens = dt::empty<std::int32_t>(Batch(8), Steps(100));
  for (dt::index_t i = 0; i < tokens.size(); ++i) tokens.data()[i] = static_cast<std::int32_t>((i * 37) % 1000);
  auto out = dt::index_select<Vocab>(weight, tokens);
  REQUIRE(out.extents() == std::array<dt::index_t, 3>{8, 100, 64});
  bool all = true;
  for (dt::index_t b = 0; b < 8; ++b)
    for (dt::index_t s = 0; s < 100; ++s)
      for (dt::index_t e = 0; e < 64; ++e)
        all = all && out(Batch(b), Steps(s), Embed(e)) ==
                         static_cast<float>(((b * 100 + s) * 37 % 1000) * 64 + e);
  CHECK(all);
}

TEST_CASE("index_select with a padding index: the same values, no gradient for its picks", "[ops][index_select]") {
  auto weight = dt::empty<double>(Vocab(4), Embed(2));
  for (dt::index_t i = 0; i < weight.size(); ++i) weight.data()[i] = static_cast<double>(i) + 0.5;
  weight.requires_grad_();
  dt::tensor<std::int32_t, Batch, Steps> tokens{{2, 0, 2}, {3, 2, 0}};
  auto const plain = dt::index_select<Vocab>(weight, tokens);
  auto const padded = dt::index_select<Vocab>(weight, tokens, dt::padding_index{2});
  CHECK(dt::equal(plain, padded));
  dt::sum(padded).backward();
  // picks of rows 0 (twice) and 3 (once) count; row 2's three picks do not
  double const counts[4] = {2, 0, 0, 1};
  for (dt::index_t v = 0; v < 4; ++v) {
    CHECK(weight.grad()(Vocab(v), Embed(0)) == counts[v]);
    CHECK(weight.grad()(Vocab(v), Embed(1)) == counts[v]);
  }
}
