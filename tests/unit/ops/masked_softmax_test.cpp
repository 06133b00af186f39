#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/masked_softmax.hpp>

#include <catch2/catch.hpp>

#include "unit/support/softmax_reference.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

namespace dt = dimtensor;

namespace masked_softmax_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);

using test_support::check_against;
using test_support::draw;

using scores_t = dt::tensor<float, Batch, Queries, KVPairs>;

scores_t random_scores(dt::index_t b, dt::index_t q, dt::index_t k, std::uint32_t seed, float scale = 1.0f) {
  scores_t x(dt::uninitialized, {b, q, k});
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = draw(seed) * scale;
  return x;
}

// d2l's masked_softmax in double precision, literally: scores at index >= len
// become -1e6, then softmax along `axis` of the contiguous [A, B, C] tensor x.
// len_of(i, k) gives the length of the row at the two other axes' indices (in order).
template <class T, class LenOf>
std::vector<double> reference(T const& x, int axis, LenOf const& len_of) {
  return test_support::softmax_reference(x, axis, false, len_of);
}

TEST_CASE("masked_softmax: d2l's two demos", "[masked_softmax]") {
  // d2l: masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3])): row b keeps its first
  // valid_lens[b] scores; masked_softmax(torch.rand(2, 2, 4), torch.tensor([[1, 3], [2, 4]])).
  scores_t const x{{{0.5f, 0.1f, 0.9f, 0.3f}, {0.2f, 0.8f, 0.4f, 0.6f}},
                   {{0.7f, 0.3f, 0.1f, 0.9f}, {0.6f, 0.5f, 0.2f, 0.0f}}};

  SECTION("1-D valid_lens [Batch], shared by the batch row's queries") {
    dt::tensor<std::int64_t, Batch> const valid_lens{2, 3};
    auto y = dt::masked_softmax<KVPairs>(x, valid_lens);
    static_assert(std::is_same_v<decltype(y), scores_t>);
    check_against(y, reference(x, 2, [&](dt::index_t b, dt::index_t) { return valid_lens(Batch(b)); }), 1e-7);
    CHECK(y(Batch(0), Queries(1), KVPairs(2)) == 0.0f);
    CHECK(y(Batch(1), Queries(0), KVPairs(3)) == 0.0f);
    CHECK(y(Batch(0), Queries(0), KVPairs(0)) == Approx(1.0 / (1.0 + std::exp(0.1 - 0.5))));
  }
  SECTION("2-D valid_lens [Batch, Queries]") {
    dt::tensor<std::int64_t, Batch, Queries> const valid_lens{{1, 3}, {2, 4}};
    auto y = dt::masked_softmax<KVPairs>(x, valid_lens);
    check_against(y,
                  reference(x, 2, [&](dt::index_t b, dt::index_t q) { return valid_lens(Batch(b), Queries(q)); }),
                  1e-7);
    CHECK(y(Batch(0), Queries(0), KVPairs(0)) == 1.0f);
    CHECK(y(Batch(0), Queries(0), KVPairs(1)) == 0.0f);
  }
}

TEST_CASE("masked_softmax against a literal double-precision d2l", "[masked_softmax]") {
  auto const x = random_scores(3, 5, 9, 1, 4.0f);
  SECTION("int64 [Batch] lengths, with 0 and the full extent") {
    dt::tensor<std::int64_t, Batch> const vl{0, 4, 9};
    check_against(dt::masked_softmax<KVPairs>(x, vl),
                  reference(x, 2, [&](dt::index_t b, dt::index_t) { return vl(Batch(b)); }), 1e-6);
  }
  SECTION("int32 [Batch, Queries] lengths") {
    dt::tensor<std::int32_t, Batch, Queries> const vl{{0, 1, 2, 3, 9}, {9, 8, 0, 5, 6}, {1, 1, 9, 4, 0}};
    check_against(dt::masked_softmax<KVPairs>(x, vl),
                  reference(x, 2, [&](dt::index_t b, dt::index_t q) { return vl(Batch(b), Queries(q)); }), 1e-6);
  }
  SECTION("a rank-0 length shared by all rows") {
    dt::tensor<std::int32_t> vl(dt::uninitialized, {});
    vl.data()[0] = 5;
    check_against(dt::masked_softmax<KVPairs>(x, vl), reference(x, 2, [](dt::index_t, dt::index_t) { return 5; }),
                  1e-6);
  }
}

TEST_CASE("masked_softmax: a masking value is its lengths, or plain softmax", "[masked_softmax]") {
  dt::tensor<float, Batch, Queries, KVPairs> const x{{{1, 2, 3, 4}, {4, 3, 2, 1}}, {{0, 1, 0, 1}, {2, 2, 1, 0}}};
  dt::tensor<std::int32_t, Batch> const lens{2, 3};
  CHECK(dt::allclose(dt::masked_softmax<KVPairs>(x, dt::masking_of<KVPairs>(lens)),
                     dt::masked_softmax<KVPairs>(x, lens), 0.0, 0.0));
  CHECK(dt::allclose(dt::masked_softmax<KVPairs>(x, dt::masking_of<KVPairs>()), dt::softmax<KVPairs>(x), 0.0, 0.0));
  using lens_t = dt::tensor<std::int32_t, Batch>;
  CHECK(dt::allclose(dt::masked_softmax<KVPairs>(x, dt::masking_of<KVPairs>(std::optional<lens_t>{})),
                     dt::softmax<KVPairs>(x), 0.0, 0.0));
}

TEST_CASE("masked_softmax: length-0 rows are uniform, masked positions exactly 0", "[masked_softmax]") {
  auto const x = random_scores(2, 3, 6, 2, 4.0f);
  dt::tensor<std::int64_t, Batch, Queries> const vl{{0, 6, 2}, {1, 0, 3}};
  auto const y = dt::masked_softmax<KVPairs>(x, vl);
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t q = 0; q < 3; ++q) {
      dt::index_t const len = vl(Batch(b), Queries(q));
      double total = 0;
      for (dt::index_t k = 0; k < 6; ++k) {
        float const v = y(Batch(b), Queries(q), KVPairs(k));
        total += v;
        if (len == 0) {
          CHECK(v == Approx(1.0 / 6.0).margin(1e-7));
        } else if (k >= len) {
          CHECK(v == 0.0f);
        }
      }
      CHECK(total == Approx(1.0).margin(1e-6));
    }
  }
}

TEST_CASE("masked_softmax: large logits give no NaN", "[masked_softmax]") {
  auto const x = random_scores(3, 5, 9, 3, 4000.0f);  // |x| up to 12000: exp(x) overflows
  dt::tensor<std::int64_t, Batch, Queries> const vl{{0, 1, 2, 3, 9}, {9, 8, 0, 5, 6}, {1, 1, 9, 4, 0}};
  auto const y = dt::masked_softmax<KVPairs>(x, vl);
  check_against(y, reference(x, 2, [&](dt::index_t b, dt::index_t q) { return vl(Batch(b), Queries(q)); }), 1e-6);
  check_against(dt::masked_softmax<KVPairs>(x),
                reference(x, 2, [](dt::index_t, dt::index_t) { return 9; }), 1e-6);
}

TEST_CASE("masked_softmax is literal d2l: scores below -1e6 lose to the masked ones", "[masked_softmax]") {
  // d2l replaces masked scores by -1e6 before the softmax, so when every valid
  // score is far below -1e6 the masked positions take the weight.
  dt::tensor<float, Batch, KVPairs> const x{{-3e6f, -2e6f, 0.0f, 5.0f}};
  dt::tensor<std::int64_t, Batch> const vl{2};
  auto const y = dt::masked_softmax<KVPairs>(x, vl);
  CHECK(y(Batch(0), KVPairs(0)) == 0.0f);
  CHECK(y(Batch(0), KVPairs(1)) == 0.0f);
  CHECK(y(Batch(0), KVPairs(2)) == Approx(0.5));
  CHECK(y(Batch(0), KVPairs(3)) == Approx(0.5));
}

TEST_CASE("masked_softmax along a dim that is not the last", "[masked_softmax]") {
  auto const x = random_scores(3, 7, 5, 4, 3.0f);
  SECTION("over Queries, lengths [Batch] broadcast over KVPairs") {
    dt::tensor<std::int64_t, Batch> const vl{7, 0, 3};
    check_against(dt::masked_softmax<Queries>(x, vl),
                  reference(x, 1, [&](dt::index_t b, dt::index_t) { return vl(Batch(b)); }), 1e-6);
  }
  SECTION("over Queries, lengths [Batch, KVPairs]") {
    dt::tensor<std::int64_t, Batch, KVPairs> const vl{{0, 1, 2, 3, 4}, {7, 6, 5, 4, 3}, {2, 2, 0, 7, 1}};
    check_against(dt::masked_softmax<Queries>(x, vl),
                  reference(x, 1, [&](dt::index_t b, dt::index_t k) { return vl(Batch(b), KVPairs(k)); }), 1e-6);
  }
  SECTION("over Batch, lengths [Queries]") {
    dt::tensor<std::int64_t, Queries> const vl{0, 1, 2, 3, 3, 2, 1};
    check_against(dt::masked_softmax<Batch>(x, vl),
                  reference(x, 0, [&](dt::index_t q, dt::index_t) { return vl(Queries(q)); }), 1e-6);
  }
}

TEST_CASE("masked_softmax over rank-4 scores (multi-head)", "[masked_softmax]") {
  dt::tensor<float, Batch, Heads, Queries, KVPairs> x(dt::uninitialized, {2, 3, 4, 6});
  std::uint32_t seed = 5;
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = draw(seed);
  // As [Batch * Heads, Queries, KVPairs] the reference can reuse the rank-3 loop.
  scores_t flat(x.storage(), x.data(), {6, 4, 6}, {24, 6, 1});
  SECTION("lengths [Batch]: one per batch row, shared by heads and queries") {
    dt::tensor<std::int64_t, Batch> const vl{3, 6};
    check_against(dt::masked_softmax<KVPairs>(x, vl),
                  reference(flat, 2, [&](dt::index_t bh, dt::index_t) { return vl(Batch(bh / 3)); }), 1e-6);
  }
  SECTION("lengths [Batch, Heads, Queries]") {
    dt::tensor<std::int64_t, Batch, Heads, Queries> vl(dt::uninitialized, {2, 3, 4});
    for (dt::index_t i = 0; i < vl.size(); ++i) vl.data()[i] = i % 7;
    check_against(dt::masked_softmax<KVPairs>(x, vl),
                  reference(flat, 2, [&](dt::index_t bh, dt::index_t q) { return vl.data()[bh * 4 + q]; }), 1e-6);
  }
}

TEST_CASE("masked_softmax without valid lengths is softmax", "[masked_softmax]") {
  auto const x = random_scores(2, 3, 5, 6, 2.0f);
  auto const want = dt::softmax<KVPairs>(x);
  auto check_same = [&](scores_t const& y) {
    for (dt::index_t i = 0; i < x.size(); ++i) CHECK(y.data()[i] == want.data()[i]);
  };
  check_same(dt::masked_softmax<KVPairs>(x));
  check_same(dt::masked_softmax<KVPairs>(x, std::nullopt));
  std::optional<dt::tensor<std::int64_t, Batch>> lens;
  check_same(dt::masked_softmax<KVPairs>(x, lens));
  SECTION("a std::optional holding lengths masks") {
    lens = dt::tensor<std::int64_t, Batch>{1, 5};
    auto const y = dt::masked_softmax<KVPairs>(x, lens);
    CHECK(y(Batch(0), Queries(2), KVPairs(0)) == 1.0f);
    CHECK(y(Batch(0), Queries(2), KVPairs(1)) == 0.0f);
  }
}

TEST_CASE("masked_softmax of expressions, double scores, large tensors", "[masked_softmax]") {
  SECTION("expressions are evaluated first, the lengths too") {
    auto const x = random_scores(2, 3, 5, 7);
    dt::tensor<std::int64_t, Batch> const vl{2, 4};
    scores_t const doubled = x * 2.0f;
    check_against(dt::masked_softmax<KVPairs>(x * 2.0f, vl + std::int64_t{1}),
                  reference(doubled, 2, [&](dt::index_t b, dt::index_t) { return vl(Batch(b)) + 1; }), 1e-6);
  }
  SECTION("double") {
    dt::tensor<double, Batch, KVPairs> const x{{1.0, 2.0, 3.0}, {4.0, -1.0, 0.5}};
    auto y = dt::masked_softmax<KVPairs>(x, dt::tensor<std::int32_t, Batch>{2, 0});
    static_assert(std::is_same_v<decltype(y), dt::tensor<double, Batch, KVPairs>>);
    CHECK(y(Batch(0), KVPairs(1)) == Approx(std::exp(1.0) / (1.0 + std::exp(1.0))).epsilon(1e-14));
    CHECK(y(Batch(1), KVPairs(2)) == Approx(1.0 / 3.0).epsilon(1e-14));
  }
  SECTION("large enough for threads, both kernel layouts") {
    auto const x = random_scores(16, 64, 100, 8, 5.0f);
    dt::tensor<std::int64_t, Batch, Queries> vl(dt::uninitialized, {16, 64});
    for (dt::index_t i = 0; i < vl.size(); ++i) vl.data()[i] = (i * 37) % 101;
    check_against(dt::masked_softmax<KVPairs>(x, vl),
                  reference(x, 2, [&](dt::index_t b, dt::index_t q) { return vl(Batch(b), Queries(q)); }), 1e-6);
    dt::tensor<std::int64_t, Batch> vb(dt::uninitialized, {16});
    for (dt::index_t i = 0; i < 16; ++i) vb.data()[i] = (i * 13) % 65;
    check_against(dt::masked_softmax<Queries>(x, vb),
                  reference(x, 1, [&](dt::index_t b, dt::index_t) { return vb(Batch(b)); }), 1e-6);
  }
}

TEST_CASE("masked_softmax: bad lengths throw, naming the value, position and extent", "[masked_softmax]") {
  auto const x = random_scores(2, 3, 4, 9);
  SECTION("a length above the extent of D") {
    dt::tensor<std::int64_t, Batch, Queries> const vl{{1, 2, 3}, {4, 5, 0}};
    REQUIRE_THROWS_AS(dt::masked_softmax<KVPairs>(x, vl), dt::value_error);
    REQUIRE_THROWS_WITH(dt::masked_softmax<KVPairs>(x, vl),
                        Catch::Contains("masked_softmax: valid length 5 at valid_lens[Batch=1, Queries=1]") &&
                            Catch::Contains("dimension KVPairs of extent 4"));
  }
  SECTION("a negative length") {
    dt::tensor<std::int32_t, Batch> const vl{2, -1};
    REQUIRE_THROWS_AS(dt::masked_softmax<KVPairs>(x, vl), dt::value_error);
    REQUIRE_THROWS_WITH(dt::masked_softmax<KVPairs>(x, vl),
                        Catch::Contains("valid length -1 at valid_lens[Batch=1]") &&
                            Catch::Contains("KVPairs of extent 4") && Catch::Contains("[0, 4]"));
  }
  SECTION("lengths whose extents differ from the scores'") {
    dt::tensor<std::int64_t, Batch, Queries> const vl{{1, 2}, {3, 4}};
    REQUIRE_THROWS_AS(dt::masked_softmax<KVPairs>(x, vl), dt::shape_error);
    REQUIRE_THROWS_WITH(dt::masked_softmax<KVPairs>(x, vl),
                        Catch::Contains("masked_softmax: extent mismatch for dimension Queries: 3 (scores) vs 2 (valid_lens)"));
  }
  SECTION("the extent is checked along D, wherever D is") {
    dt::tensor<std::int64_t, Batch> const vl{3, 4};
    REQUIRE_THROWS_WITH(dt::masked_softmax<Queries>(x, vl),
                        Catch::Contains("valid length 4 at valid_lens[Batch=1]") &&
                            Catch::Contains("dimension Queries of extent 3"));
  }
}

}  // namespace masked_softmax_test
