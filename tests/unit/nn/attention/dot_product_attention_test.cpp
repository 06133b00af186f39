// Tests of nn/attention/dot_product_attention.hpp: d2l's DotProductAttention
// against naive loops written here (double precision), with no, 1-D and
// 2-D valid_lens, in d2l's 3-D layout and the 4-D [Batch, Queries, Heads,
// HeadFeat] one; the book's toy; the kept attention weights; dropout.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/parameters.hpp>

#include "unit/support/attention_reference.hpp"

namespace dot_product_attention_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(ValueFeat);

namespace dt = dimtensor;
using dt::index_t;
using dt::nn::HeadFeat;
using dt::nn::Heads;
using test_support::attend_row;
using test_support::tolerance;
using test_support::weighted_value;

// Sizes drawn from a seed: small, and different for each seed.
struct sizes {
  index_t batch, queries, kv, feat, value;
};
inline sizes draw_sizes(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(rng); };
  return {pick(1, 3), pick(1, 4), pick(1, 6), pick(1, 5), pick(1, 4)};
}

TEMPLATE_TEST_CASE("dot_product_attention: against naive loops, no, 1-D and 2-D valid_lens", "[nn][attention]", float) {
  using T = TestType;
  auto const seed = GENERATE(1u, 2u, 3u, 4u, 5u);
  sizes const n = draw_sizes(seed);
  dt::generator gen(seed);
  auto const queries = dt::randn<T>(gen, Batch(n.batch), Queries(n.queries), Feat(n.feat));
  auto const keys = dt::randn<T>(gen, Batch(n.batch), KVPairs(n.kv), Feat(n.feat));
  auto const values = dt::randn<T>(gen, Batch(n.batch), KVPairs(n.kv), ValueFeat(n.value));
  auto const lens_1d = dt::randint<std::int32_t>(gen, 1, n.kv + 1, Batch(n.batch));
  auto const lens_2d = dt::randint<std::int64_t>(gen, 0, n.kv + 1, Batch(n.batch), Queries(n.queries));
  double const scale = 1.0 / std::sqrt(double(n.feat));

  dt::nn::dot_product_attention<Queries, KVPairs, Feat, T> attention(0.5);
  CHECK(attention.dropout.is_training());
  attention.eval();
  CHECK_FALSE(attention.dropout.is_training());

  // Checks out and the kept weights against the naive loops, lengths from len(b, q).
  auto const check = [&](auto const& out, auto const& len) {
    STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(out)>, dt::tensor<T, Batch, Queries, ValueFeat>>);
    auto const& weights = attention.template attention_weights<Batch, Queries, KVPairs>();
    REQUIRE(weights.extents() == std::array<index_t, 3>{n.batch, n.queries, n.kv});
    for (index_t b = 0; b < n.batch; ++b)
      for (index_t q = 0; q < n.queries; ++q) {
        auto const want = attend_row(
            n.kv, n.value, len(b, q),
            [&](index_t k) {
              double s = 0;
              for (index_t f = 0; f < n.feat; ++f)
                s += double(queries(Batch(b), Queries(q), Feat(f))) * double(keys(Batch(b), KVPairs(k), Feat(f)));
              return s * scale;
            },
            [&](index_t k, index_t j) { return double(values(Batch(b), KVPairs(k), ValueFeat(j))); });
        for (index_t k = 0; k < n.kv; ++k)
          CHECK(double(weights(Batch(b), Queries(q), KVPairs(k))) ==
                Approx(want.weights[std::size_t(k)]).margin(tolerance<T>()));
        for (index_t j = 0; j < n.value; ++j)
          CHECK(double(out(Batch(b), Queries(q), ValueFeat(j))) ==
                Approx(want.output[std::size_t(j)]).margin(tolerance<T>()));
      }
  };
  auto const all = [&](index_t, index_t) { return n.kv; };
  auto const per_batch = [&](index_t b, index_t) { return index_t(lens_1d(Batch(b))); };
  auto const per_query = [&](index_t b, index_t q) { return index_t(lens_2d(Batch(b), Queries(q))); };

  SECTION("no valid_lens") { check(attention(queries, keys, values), all); }
  SECTION("std::nullopt") { check(attention(queries, keys, values, std::nullopt), all); }
  SECTION("1-D valid_lens [Batch], int32") { check(attention(queries, keys, values, lens_1d), per_batch); }
  SECTION("1-D valid_lens [Batch], int64") {
    check(attention(queries, keys, values, dt::cast<std::int64_t>(lens_1d)), per_batch);
  }
  SECTION("2-D valid_lens [Batch, Queries], lengths 0 included") {
    check(attention(queries, keys, values, lens_2d), per_query);
  }
  SECTION("std::optional valid_lens, with and without a value") {
    using lens_t = dt::tensor<std::int32_t, Batch>;
    check(attention(queries, keys, values, std::optional<lens_t>(lens_1d)), per_batch);
    check(attention(queries, keys, values, std::optional<lens_t>()), all);
  }
  SECTION("lazy operands and keys stored transposed, [Batch, Feat, KVPairs]") {
    // The contractions go by name, so d2l's keys.transpose(1, 2) is a layout, not a mistake.
    auto const keys_t = dt::transpose<KVPairs, Feat>(keys).contiguous();
    STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(keys_t)>::specs, dt::dims<Batch, Feat, KVPairs>>);
    check(attention(queries * T(1), keys_t, values + T(0), lens_1d), per_batch);
  }
}

TEMPLATE_TEST_CASE("dot_product_attention: the 4-D use [Batch, Queries, Heads, HeadFeat]", "[nn][attention]", float) {
  using T = TestType;
  index_t const B = 2, Q = 3, H = 2, K = 4, D = 3, V = 2;
  dt::generator gen(21);
  auto const queries = dt::randn<T>(gen, Batch(B), Queries(Q), Heads(H), HeadFeat(D));
  auto const keys = dt::randn<T>(gen, Batch(B), KVPairs(K), Heads(H), HeadFeat(D));
  auto const values = dt::randn<T>(gen, Batch(B), KVPairs(K), Heads(H), ValueFeat(V));
  auto const lens_1d = dt::tensor<int, Batch>{2, 4};
  auto const lens_2d = dt::tensor<int, Batch, Queries>{{1, 2, 3}, {4, 0, 2}};
  dt::nn::dot_product_attention<Queries, KVPairs, HeadFeat, T> attention;
  double const scale = 1.0 / std::sqrt(double(D));

  auto const check = [&](auto const& out, auto const& len) {
    STATIC_REQUIRE(
        std::is_same_v<std::remove_cvref_t<decltype(out)>, dt::tensor<T, Batch, Queries, Heads, ValueFeat>>);
    auto const& weights = attention.template attention_weights<Batch, Queries, Heads, KVPairs>();
    for (index_t b = 0; b < B; ++b)
      for (index_t q = 0; q < Q; ++q)
        for (index_t h = 0; h < H; ++h) {
          auto const want = attend_row(
              K, V, len(b, q),
              [&](index_t k) {
                double s = 0;
                for (index_t f = 0; f < D; ++f)
                  s += double(queries(Batch(b), Queries(q), Heads(h), HeadFeat(f))) *
                       double(keys(Batch(b), KVPairs(k), Heads(h), HeadFeat(f)));
                return s * scale;
              },
              [&](index_t k, index_t j) { return double(values(Batch(b), KVPairs(k), Heads(h), ValueFeat(j))); });
          for (index_t k = 0; k < K; ++k)
            CHECK(double(weights(Batch(b), Queries(q), Heads(h), KVPairs(k))) ==
                  Approx(want.weights[std::size_t(k)]).margin(tolerance<T>()));
          for (index_t j = 0; j < V; ++j)
            CHECK(double(out(Batch(b), Queries(q), Heads(h), ValueFeat(j))) ==
                  Approx(want.output[std::size_t(j)]).margin(tolerance<T>()));
        }
  };
  SECTION("no valid_lens") {
    check(attention(queries, keys, values), [&](index_t, index_t) { return K; });
  }
  SECTION("valid_lens [Batch], broadcast over Queries and Heads by name") {
    check(attention(queries, keys, values, lens_1d), [&](index_t b, index_t) { return index_t(lens_1d(Batch(b))); });
  }
  SECTION("valid_lens [Batch, Queries], broadcast over Heads") {
    check(attention(queries, keys, values, lens_2d),
          [&](index_t b, index_t q) { return index_t(lens_2d(Batch(b), Queries(q))); });
  }
}

TEST_CASE("dot_product_attention: the book's toy gives [[2, 3, 4, 5]] and [[10, 11, 12, 13]]", "[nn][attention]") {
  // queries normal(0, 1, (2, 1, 2)); keys ones((2, 10, 2)); valid_lens [2, 6];
  // DotProductAttention(dropout=0.5) in eval mode: the weights are uniform
  // over the valid pairs, whatever the queries.
  dt::generator gen(0);
  auto const queries = dt::normal<float>(gen, 0, 1, Batch(2), Queries(1), Feat(2));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Feat(2));
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention(0.5);
  test_support::check_book_toy<Batch, Queries, KVPairs, ValueFeat>(attention, queries, keys);
}

TEST_CASE("dot_product_attention: attention_weights<Dims...>() checks the dims it is asked for", "[nn][attention]") {
  dt::generator gen(3);
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention;
  SECTION("before any call") {
    REQUIRE_THROWS_AS((attention.attention_weights<Batch, Queries, KVPairs>()), dt::value_error);
    REQUIRE_THROWS_WITH((attention.attention_weights<Batch, Queries, KVPairs>()),
                        Catch::Contains("dot_product_attention") && Catch::Contains("no attention weights yet"));
  }
  auto const queries = dt::randn<float>(gen, Batch(2), Queries(3), Feat(4));
  auto const keys = dt::randn<float>(gen, Batch(2), KVPairs(5), Feat(4));
  auto const values = dt::randn<float>(gen, Batch(2), KVPairs(5), ValueFeat(2));
  (void)attention(queries, keys, values);
  SECTION("the dims in another order") {
    REQUIRE_THROWS_AS((attention.attention_weights<Batch, KVPairs, Queries>()), dt::value_error);
    REQUIRE_THROWS_WITH((attention.attention_weights<Batch, KVPairs, Queries>()),
                        Catch::Contains("dot_product_attention") &&
                            Catch::Contains("[Batch=2, Queries=3, KVPairs=5]") &&
                            Catch::Contains("not [Batch, KVPairs, Queries]"));
  }
  SECTION("a static extent where the weights' is dynamic: accepted when it holds") {
    auto const w = attention.attention_weights<Batch, Queries, KVPairs::fixed<5>>();
    CHECK(w.data() == attention.attention_weights<Batch, Queries, KVPairs>().data());
    REQUIRE_THROWS_AS((attention.attention_weights<Batch, Queries, KVPairs::fixed<4>>()), dt::value_error);
    REQUIRE_THROWS_WITH((attention.attention_weights<Batch, Queries, KVPairs::fixed<4>>()),
                        Catch::Contains("[Batch=2, Queries=3, KVPairs=5]") &&
                            Catch::Contains("not [Batch, Queries, KVPairs::fixed<4>]"));
  }
  SECTION("other dims") {
    REQUIRE_THROWS_WITH((attention.attention_weights<Queries, KVPairs>()),
                        Catch::Contains("[Batch=2, Queries=3, KVPairs=5]") && Catch::Contains("not [Queries, KVPairs]"));
  }
  SECTION("the right dims, and the weights of the latest call") {
    auto const w = attention.attention_weights<Batch, Queries, KVPairs>();
    CHECK(w.extents() == std::array<index_t, 3>{2, 3, 5});
    auto const first = w.clone();
    // A handle kept from one call still holds that call's weights after the next.
    (void)attention(queries * 2.0f, keys, values);
    auto const second = attention.attention_weights<Batch, Queries, KVPairs>();
    bool changed = false;
    for (index_t b = 0; b < 2; ++b)
      for (index_t q = 0; q < 3; ++q)
        for (index_t k = 0; k < 5; ++k) {
          CHECK(w(Batch(b), Queries(q), KVPairs(k)) == first(Batch(b), Queries(q), KVPairs(k)));
          changed = changed || second(Batch(b), Queries(q), KVPairs(k)) != first(Batch(b), Queries(q), KVPairs(k));
        }
    CHECK(changed);
    auto const q4 = dt::randn<float>(gen, Batch(2), Queries(3), Heads(2), Feat(4));
    auto const k4 = dt::randn<float>(gen, Batch(2), KVPairs(5), Heads(2), Feat(4));
    auto const v4 = dt::randn<float>(gen, Batch(2), KVPairs(5), Heads(2), ValueFeat(2));
    (void)attention(q4, k4, v4);
    CHECK(attention.attention_weights<Batch, Queries, Heads, KVPairs>().extents() ==
          std::array<index_t, 4>{2, 3, 2, 5});
    REQUIRE_THROWS_WITH((attention.attention_weights<Batch, Queries, KVPairs>()),
                        Catch::Contains("[Batch=2, Queries=3, Heads=2, KVPairs=5]"));
  }
}

TEST_CASE("dot_product_attention: dropout on the weights in train mode only", "[nn][attention]") {
  dt::generator gen(8);
  auto const queries = dt::randn<float>(gen, Batch(2), Queries(3), Feat(4));
  auto const keys = dt::randn<float>(gen, Batch(2), KVPairs(6), Feat(4));
  auto const values = dt::randn<float>(gen, Batch(2), KVPairs(6), ValueFeat(3));
  auto const valid_lens = dt::tensor<int, Batch>{4, 6};
  double const p = 0.5;
  std::uint64_t const seed = 77;

  dt::nn::dot_product_attention<Queries, KVPairs, Feat> reference;  // no dropout
  dt::tensor<float, Batch, Queries, ValueFeat> const plain = reference(queries, keys, values, valid_lens);
  auto const weights = reference.attention_weights<Batch, Queries, KVPairs>().clone();

  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention(p, seed);
  CHECK(&attention.train() == &attention);
  dt::tensor<float, Batch, Queries, ValueFeat> const trained = attention(queries, keys, values, valid_lens);
  // The same mask, drawn by a dropout of the same seed: out = contract(weights · mask / (1 - p), values).
  dt::nn::dropout same(p, seed);
  auto const dropped = same(weights);
  bool differs = false;
  for (index_t b = 0; b < 2; ++b)
    for (index_t q = 0; q < 3; ++q)
      for (index_t j = 0; j < 3; ++j) {
        double const want = weighted_value<KVPairs>(dropped, values, Batch(b), Queries(q), ValueFeat(j));
        CHECK(trained(Batch(b), Queries(q), ValueFeat(j)) == Approx(want).margin(1e-5));
        differs = differs || std::abs(trained(Batch(b), Queries(q), ValueFeat(j)) - plain(Batch(b), Queries(q), ValueFeat(j))) > 1e-4;
      }
  CHECK(differs);
  // The kept weights are those before dropout, as d2l's self.attention_weights.
  auto const& kept = attention.attention_weights<Batch, Queries, KVPairs>();
  for (index_t k = 0; k < 6; ++k) CHECK(kept(Batch(1), Queries(2), KVPairs(k)) == Approx(weights(Batch(1), Queries(2), KVPairs(k))));

  CHECK(&attention.eval() == &attention);
  dt::tensor<float, Batch, Queries, ValueFeat> const evaluated = attention(queries, keys, values, valid_lens);
  for (index_t b = 0; b < 2; ++b)
    for (index_t q = 0; q < 3; ++q)
      for (index_t j = 0; j < 3; ++j)
        CHECK(evaluated(Batch(b), Queries(q), ValueFeat(j)) == plain(Batch(b), Queries(q), ValueFeat(j)));
}

TEST_CASE("dot_product_attention: run-time errors name the call, the dim and the sizes", "[nn][attention]") {
  dt::generator gen(4);
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention;
  auto const queries = dt::randn<float>(gen, Batch(2), Queries(3), Feat(4));
  auto const keys = dt::randn<float>(gen, Batch(2), KVPairs(10), Feat(4));
  auto const values = dt::randn<float>(gen, Batch(2), KVPairs(10), ValueFeat(2));
  SECTION("values with 6 pairs, keys with 10") {
    auto const short_values = dt::randn<float>(gen, Batch(2), KVPairs(6), ValueFeat(2));
    REQUIRE_THROWS_AS(attention(queries, keys, short_values), dt::shape_error);
    REQUIRE_THROWS_WITH(attention(queries, keys, short_values),
                        Catch::StartsWith("dot_product_attention: values: extent mismatch for dimension KVPairs: "
                                          "10 (keys) vs 6 (values)"));
  }
  SECTION("queries and keys of different feature sizes") {
    auto const wide_keys = dt::randn<float>(gen, Batch(2), KVPairs(10), Feat(5));
    REQUIRE_THROWS_AS(attention(queries, wide_keys, values), dt::shape_error);
    REQUIRE_THROWS_WITH(attention(queries, wide_keys, values),
                        Catch::StartsWith("dot_product_attention: keys: extent mismatch for dimension Feat: "
                                          "4 (queries) vs 5 (keys)"));
  }
  SECTION("a batch of 3 keys for 2 queries") {
    auto const more_keys = dt::randn<float>(gen, Batch(3), KVPairs(10), Feat(4));
    REQUIRE_THROWS_AS(attention(queries, more_keys, values), dt::shape_error);
    REQUIRE_THROWS_WITH(attention(queries, more_keys, values),
                        Catch::StartsWith("dot_product_attention: keys: extent mismatch for dimension Batch: "
                                          "2 (queries) vs 3 (keys)"));
  }
  SECTION("valid_lens for 3 batch rows") {
    auto const lens = dt::tensor<int, Batch>{1, 2, 3};
    REQUIRE_THROWS_AS(attention(queries, keys, values, lens), dt::shape_error);
    // The masking's own words follow the call's name.
    REQUIRE_THROWS_WITH(attention(queries, keys, values, lens),
                        Catch::StartsWith("dot_product_attention: masked_softmax: ") && Catch::Contains("Batch") &&
                            Catch::Contains("3"));
  }
  SECTION("a length longer than the key-value pairs") {
    auto const lens = dt::tensor<int, Batch>{2, 11};
    REQUIRE_THROWS_AS(attention(queries, keys, values, lens), dt::value_error);
    REQUIRE_THROWS_WITH(
        attention(queries, keys, values, lens),
        Catch::StartsWith("dot_product_attention: masked_softmax: valid length 11") && Catch::Contains("10"));
  }
}

TEST_CASE("dot_product_attention: no parameters", "[nn][attention]") {
  dt::nn::dot_product_attention<Queries, KVPairs, Feat, double> const attention;
  STATIC_REQUIRE(dt::nn::Module<dt::nn::dot_product_attention<Queries, KVPairs, Feat>>);
  CHECK(dt::nn::parameter_names(attention).empty());
  CHECK(dt::nn::parameter_count(attention) == 0);
  STATIC_REQUIRE(std::is_same_v<dt::nn::dot_product_attention<Queries, KVPairs, Feat, double>::value_type, double>);
}

}  // namespace dot_product_attention_test

namespace dot_product_attention_test {

TEST_CASE("dot_product_attention: operands' dims in any order, by name", "[nn][attention]") {
  // The scores and the weighted sum are contractions by name: keys and
  // values time-first give the same numbers as batch-first.
  dt::generator gen(8);
  dt::nn::dot_product_attention<Queries, KVPairs, Feat, double> attention;
  auto const queries = dt::randn<double>(gen, Batch(2), Queries(3), Feat(4));
  auto const keys = dt::randn<double>(gen, Batch(2), KVPairs(5), Feat(4));
  auto const values = dt::randn<double>(gen, Batch(2), KVPairs(5), ValueFeat(2));
  dt::tensor<int, Batch> const lens{2, 5};
  dt::tensor<double, Batch, Queries, ValueFeat> const batch_first = attention(queries, keys, values, lens);
  auto const time_first = attention(queries, dt::permute<KVPairs, Batch, Feat>(keys),
                                    dt::permute<KVPairs, Batch, ValueFeat>(values), lens);
  CHECK(dt::max_abs_diff(batch_first, time_first) < 1e-12);
}

}  // namespace dot_product_attention_test
