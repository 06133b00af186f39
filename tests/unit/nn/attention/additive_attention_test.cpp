// Tests of nn/attention/additive_attention.hpp: d2l's AdditiveAttention
// against naive loops written here (double precision) with no, 1-D and 2-D
// valid_lens; the book's toy; d2l's initialization order; parameters by
// their state_dict keys; the kept weights; dropout; Bahdanau's square form.
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
#include "unit/support/files.hpp"

namespace additive_attention_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Steps);

namespace dt = dimtensor;
using dt::index_t;
using dt::nn::Score;
using test_support::attend_row;
using test_support::tolerance;
using test_support::weighted_value;

template <class T>
using module_t = dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden, T>;

// d2l's AdditiveAttention.forward by loops: for each (b, q), the scores
// w_v · tanh(W_q q + W_k k) over the pairs, their masked softmax, and the
// weighted sum of the values.  Returns the weights [B, Q, K] and the
// output [B, Q, V], flat.
struct reference {
  std::vector<double> weights, output;
};
template <class M, class QT, class KT, class VT, class Len>
reference naive_additive(M const& m, QT const& queries, KT const& keys, VT const& values, Len const& len) {
  index_t const B = queries.template extent<Batch>(), Q = queries.template extent<Queries>();
  index_t const K = keys.template extent<KVPairs>(), V = values.template extent<ValueFeat>();
  index_t const QF = queries.template extent<QueryFeat>(), KF = keys.template extent<KeyFeat>();
  index_t const H = m.W_q.out_features();
  reference r;
  for (index_t b = 0; b < B; ++b)
    for (index_t q = 0; q < Q; ++q) {
      auto const row = attend_row(
          K, V, len(b, q),
          [&](index_t k) {
            double score = 0;
            for (index_t h = 0; h < H; ++h) {
              double pq = 0, pk = 0;
              for (index_t f = 0; f < QF; ++f)
                pq += double(m.W_q.weight(Hidden(h), QueryFeat(f))) * double(queries(Batch(b), Queries(q), QueryFeat(f)));
              for (index_t f = 0; f < KF; ++f)
                pk += double(m.W_k.weight(Hidden(h), KeyFeat(f))) * double(keys(Batch(b), KVPairs(k), KeyFeat(f)));
              score += double(m.w_v.weight(Score(0), Hidden(h))) * std::tanh(pq + pk);
            }
            return score;
          },
          [&](index_t k, index_t j) { return double(values(Batch(b), KVPairs(k), ValueFeat(j))); });
      r.weights.insert(r.weights.end(), row.weights.begin(), row.weights.end());
      r.output.insert(r.output.end(), row.output.begin(), row.output.end());
    }
  return r;
}

TEMPLATE_TEST_CASE("additive_attention: against naive loops, no, 1-D and 2-D valid_lens", "[nn][attention]", float) {
  using T = TestType;
  auto const seed = GENERATE(1u, 2u, 3u, 4u);
  std::mt19937 rng(seed);
  auto pick = [&](index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(rng); };
  index_t const B = pick(1, 3), Q = pick(1, 3), K = pick(1, 6), QF = pick(1, 5), KF = pick(1, 5), H = pick(1, 6),
                V = pick(1, 4);
  dt::generator gen(seed);
  auto const queries = dt::randn<T>(gen, Batch(B), Queries(Q), QueryFeat(QF));
  auto const keys = dt::randn<T>(gen, Batch(B), KVPairs(K), KeyFeat(KF));
  auto const values = dt::randn<T>(gen, Batch(B), KVPairs(K), ValueFeat(V));
  auto const lens_1d = dt::randint<std::int64_t>(gen, 1, K + 1, Batch(B));
  auto const lens_2d = dt::randint<std::int32_t>(gen, 0, K + 1, Batch(B), Queries(Q));
  module_t<T> attention(KeyFeat(KF), QueryFeat(QF), Hidden(H), 0.25, gen);
  attention.eval();

  auto const check = [&](auto const& out, auto const& len) {
    STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(out)>, dt::tensor<T, Batch, Queries, ValueFeat>>);
    auto const want = naive_additive(attention, queries, keys, values, len);
    auto const& weights = attention.template attention_weights<Batch, Queries, KVPairs>();
    std::size_t i = 0, o = 0;
    for (index_t b = 0; b < B; ++b)
      for (index_t q = 0; q < Q; ++q) {
        for (index_t k = 0; k < K; ++k)
          CHECK(double(weights(Batch(b), Queries(q), KVPairs(k))) == Approx(want.weights[i++]).margin(tolerance<T>()));
        for (index_t j = 0; j < V; ++j)
          CHECK(double(out(Batch(b), Queries(q), ValueFeat(j))) == Approx(want.output[o++]).margin(tolerance<T>()));
      }
  };
  SECTION("no valid_lens") {
    check(attention(queries, keys, values), [&](index_t, index_t) { return K; });
  }
  SECTION("1-D valid_lens [Batch]") {
    check(attention(queries, keys, values, lens_1d), [&](index_t b, index_t) { return index_t(lens_1d(Batch(b))); });
  }
  SECTION("2-D valid_lens [Batch, Queries]") {
    check(attention(queries, keys, values, lens_2d),
          [&](index_t b, index_t q) { return index_t(lens_2d(Batch(b), Queries(q))); });
  }
  SECTION("std::optional valid_lens and lazy operands") {
    check(attention(queries + T(0), keys * T(1), values, std::optional(lens_1d)),
          [&](index_t b, index_t) { return index_t(lens_1d(Batch(b))); });
  }
}

TEST_CASE("additive_attention: the book's toy gives [[2, 3, 4, 5]] and [[10, 11, 12, 13]]", "[nn][attention]") {
  // queries normal(0, 1, (2, 1, 20)); keys ones((2, 10, 2)); valid_lens [2, 6];
  // AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.1),
  // eval mode: the weights are uniform over the valid pairs, whatever the
  // layers' weights.
  auto const seed = GENERATE(0u, 1u, 2u);
  dt::generator gen(seed);
  auto const queries = dt::normal<float>(gen, 0, 1, Batch(2), Queries(1), QueryFeat(20));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
  module_t<float> attention(KeyFeat(2), QueryFeat(20), Hidden(8), 0.1, gen);
  test_support::check_book_toy<Batch, Queries, KVPairs, ValueFeat>(attention, queries, keys);
}

TEST_CASE("additive_attention: layers without bias, drawn in d2l's order, under d2l's keys", "[nn][attention]") {
  dt::generator gen(42), same(42);
  module_t<float> const attention(KeyFeat(2), QueryFeat(20), Hidden(8), 0.1, gen);
  // d2l's __init__ builds W_k, W_q, w_v in that order, each without bias.
  dt::nn::linear<KeyFeat, Hidden> const W_k(KeyFeat(2), Hidden(8), false, same);
  dt::nn::linear<QueryFeat, Hidden> const W_q(QueryFeat(20), Hidden(8), false, same);
  dt::nn::linear<Hidden, Score> const w_v(Hidden(8), Score(1), false, same);
  CHECK_FALSE(attention.W_k.has_bias());
  CHECK_FALSE(attention.W_q.has_bias());
  CHECK_FALSE(attention.w_v.has_bias());
  for (index_t h = 0; h < 8; ++h) {
    for (index_t f = 0; f < 2; ++f) CHECK(attention.W_k.weight(Hidden(h), KeyFeat(f)) == W_k.weight(Hidden(h), KeyFeat(f)));
    for (index_t f = 0; f < 20; ++f)
      CHECK(attention.W_q.weight(Hidden(h), QueryFeat(f)) == W_q.weight(Hidden(h), QueryFeat(f)));
    CHECK(attention.w_v.weight(Score(0), Hidden(h)) == w_v.weight(Score(0), Hidden(h)));
  }
  CHECK(attention.dropout.p() == 0.1);

  CHECK(dt::nn::parameter_names(attention) == std::vector<std::string>{"W_k.weight", "W_q.weight", "w_v.weight"});
  CHECK(dt::nn::parameter_count(attention) == 8 * 2 + 8 * 20 + 8);
  std::vector<std::string> keys;
  attention.for_each_parameter([&](std::string const& key, auto const&) { keys.push_back(key); }, "decoder.attention.");
  CHECK(keys == std::vector<std::string>{"decoder.attention.W_k.weight", "decoder.attention.W_q.weight",
                                         "decoder.attention.w_v.weight"});
}

TEST_CASE("additive_attention: parameters saved and loaded give the same outputs", "[nn][attention]") {
  test_support::temp_dir const dir("dimtensor_additive_attention_test_");
  auto const file = dir / "attention.safetensors";
  dt::generator gen(5);
  module_t<double> source(KeyFeat(3), QueryFeat(4), Hidden(5), 0, gen);
  module_t<double> target(KeyFeat(3), QueryFeat(4), Hidden(5), 0, gen);
  auto const queries = dt::randn<double>(gen, Batch(2), Queries(3), QueryFeat(4));
  auto const keys = dt::randn<double>(gen, Batch(2), KVPairs(4), KeyFeat(3));
  auto const values = dt::randn<double>(gen, Batch(2), KVPairs(4), ValueFeat(2));
  dt::tensor<double, Batch, Queries, ValueFeat> const want = source(queries, keys, values);
  dt::tensor<double, Batch, Queries, ValueFeat> const before = target(queries, keys, values);
  CHECK(before(Batch(0), Queries(0), ValueFeat(0)) != want(Batch(0), Queries(0), ValueFeat(0)));
  dt::nn::save_parameters(source, file);
  dt::nn::load_parameters(target, file);
  dt::tensor<double, Batch, Queries, ValueFeat> const after = target(queries, keys, values);
  for (index_t b = 0; b < 2; ++b)
    for (index_t q = 0; q < 3; ++q)
      for (index_t j = 0; j < 2; ++j) CHECK(after(Batch(b), Queries(q), ValueFeat(j)) == want(Batch(b), Queries(q), ValueFeat(j)));
}

TEST_CASE("additive_attention: attention_weights<Dims...>() checks the dims it is asked for", "[nn][attention]") {
  dt::generator gen(3);
  module_t<float> attention(KeyFeat(2), QueryFeat(3), Hidden(4), 0, gen);
  REQUIRE_THROWS_AS((attention.attention_weights<Batch, Queries, KVPairs>()), dt::value_error);
  REQUIRE_THROWS_WITH((attention.attention_weights<Batch, Queries, KVPairs>()),
                      Catch::Contains("additive_attention") && Catch::Contains("no attention weights yet"));
  auto const queries = dt::randn<float>(gen, Batch(2), Queries(3), QueryFeat(3));
  auto const keys = dt::randn<float>(gen, Batch(2), KVPairs(5), KeyFeat(2));
  auto const values = dt::randn<float>(gen, Batch(2), KVPairs(5), ValueFeat(2));
  (void)attention(queries, keys, values);
  CHECK(attention.attention_weights<Batch, Queries, KVPairs>().extents() == std::array<index_t, 3>{2, 3, 5});
  REQUIRE_THROWS_AS((attention.attention_weights<Queries, Batch, KVPairs>()), dt::value_error);
  REQUIRE_THROWS_WITH((attention.attention_weights<Queries, Batch, KVPairs>()),
                      Catch::Contains("additive_attention") && Catch::Contains("[Batch=2, Queries=3, KVPairs=5]") &&
                          Catch::Contains("not [Queries, Batch, KVPairs]"));
}

TEST_CASE("additive_attention: weights of a query step from unsqueeze read back with the step dynamic",
          "[nn][attention]") {
  // The Bahdanau decoder's query is one step, unsqueezed: Queries::fixed<1>.
  dt::generator gen(4);
  module_t<float> attention(KeyFeat(2), QueryFeat(3), Hidden(4), 0, gen);
  auto const state = dt::randn<float>(gen, Batch(2), QueryFeat(3));
  auto const query = dt::unsqueeze<Queries, 1>(state);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(query)>,
                                dt::tensor<float, Batch, Queries::fixed<1>, QueryFeat>>);
  auto const keys = dt::randn<float>(gen, Batch(2), KVPairs(5), KeyFeat(2));
  auto const values = dt::randn<float>(gen, Batch(2), KVPairs(5), ValueFeat(2));
  (void)attention(query, keys, values);
  auto const dynamic = attention.attention_weights<Batch, Queries, KVPairs>();
  auto const exact = attention.attention_weights<Batch, Queries::fixed<1>, KVPairs>();
  REQUIRE(dynamic.extents() == std::array<index_t, 3>{2, 1, 5});
  CHECK(dynamic.data() == exact.data());  // the same weights, not a copy
  // A static extent that does not hold is still an error, and the message tells the two apart.
  REQUIRE_THROWS_WITH((attention.attention_weights<Batch, Queries::fixed<2>, KVPairs>()),
                      Catch::Contains("Queries::fixed<1>") && Catch::Contains("not [Batch, Queries::fixed<2>, KVPairs]"));
}

TEST_CASE("additive_attention: dropout on the weights in train mode only", "[nn][attention]") {
  dt::generator gen(8);
  auto const queries = dt::randn<float>(gen, Batch(2), Queries(3), QueryFeat(4));
  auto const keys = dt::randn<float>(gen, Batch(2), KVPairs(6), KeyFeat(2));
  auto const values = dt::randn<float>(gen, Batch(2), KVPairs(6), ValueFeat(3));
  auto const valid_lens = dt::tensor<int, Batch>{4, 6};
  double const p = 0.5;
  std::uint64_t const seed = 99;
  module_t<float> attention(KeyFeat(2), QueryFeat(4), Hidden(5), p, gen, seed);
  CHECK(attention.dropout.is_training());  // modules start in training mode, as PyTorch's

  dt::tensor<float, Batch, Queries, ValueFeat> const trained = attention(queries, keys, values, valid_lens);
  auto const weights = attention.attention_weights<Batch, Queries, KVPairs>().clone();
  dt::nn::dropout same(p, seed);
  auto const dropped = same(weights);
  CHECK(&attention.eval() == &attention);
  dt::tensor<float, Batch, Queries, ValueFeat> const evaluated = attention(queries, keys, values, valid_lens);
  bool differs = false;
  for (index_t b = 0; b < 2; ++b)
    for (index_t q = 0; q < 3; ++q)
      for (index_t j = 0; j < 3; ++j) {
        double const want_train = weighted_value<KVPairs>(dropped, values, Batch(b), Queries(q), ValueFeat(j));
        double const want_eval = weighted_value<KVPairs>(weights, values, Batch(b), Queries(q), ValueFeat(j));
        CHECK(trained(Batch(b), Queries(q), ValueFeat(j)) == Approx(want_train).margin(1e-5));
        CHECK(evaluated(Batch(b), Queries(q), ValueFeat(j)) == Approx(want_eval).margin(1e-5));
        differs = differs || std::abs(want_train - want_eval) > 1e-4;
      }
  CHECK(differs);
  CHECK(&attention.train() == &attention);
  CHECK(attention.dropout.is_training());
}

TEST_CASE("additive_attention: Bahdanau's decoder step, AdditiveAttention(h, h, h)", "[nn][attention]") {
  // d2l's Seq2SeqAttentionDecoder: queries, keys and the attention's hidden
  // layer all have num_hiddens features; W_q and W_k are square layers.
  index_t const B = 3, S = 5, H = 4;
  dt::generator gen(12);
  dt::nn::additive_attention<Queries, Steps, Hidden, Hidden, Hidden, double> attention{Hidden(H), Hidden(H), Hidden(H),
                                                                                       0, gen};
  auto const enc_outputs = dt::randn<double>(gen, Batch(B), Steps(S), Hidden(H));
  auto const hidden_state = dt::randn<double>(gen, Batch(B), Hidden(H));
  auto const enc_valid_lens = dt::tensor<int, Batch>{5, 2, 3};
  auto const query = dt::unsqueeze<Queries, 1>(hidden_state);  // torch.unsqueeze(hidden_state[-1], dim=1)
  auto const context = attention(query, enc_outputs, enc_outputs, enc_valid_lens);
  STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(context)>::specs,
                                dt::dims<Batch, dt::fixed<Queries, 1>, Hidden>>);
  for (index_t b = 0; b < B; ++b) {
    auto const want = attend_row(
        S, H, index_t(enc_valid_lens(Batch(b))),
        [&](index_t s) {
          double score = 0;
          for (index_t h = 0; h < H; ++h) {
            double pq = 0, pk = 0;
            for (index_t f = 0; f < H; ++f) {
              pq += attention.W_q.weight(Hidden(h), dt::prime<Hidden>(f)) * hidden_state(Batch(b), Hidden(f));
              pk += attention.W_k.weight(Hidden(h), dt::prime<Hidden>(f)) * enc_outputs(Batch(b), Steps(s), Hidden(f));
            }
            score += attention.w_v.weight(Score(0), Hidden(h)) * std::tanh(pq + pk);
          }
          return score;
        },
        [&](index_t s, index_t f) { return enc_outputs(Batch(b), Steps(s), Hidden(f)); });
    for (index_t f = 0; f < H; ++f)
      CHECK(context(Batch(b), Queries(0), Hidden(f)) == Approx(want.output[std::size_t(f)]).margin(1e-12));
  }
  CHECK(dt::nn::parameter_count(attention) == H * H + H * H + H);
}

TEST_CASE("additive_attention: batch dims anywhere, e.g. sequence-first [Queries, Batch, QueryFeat]",
          "[nn][attention]") {
  index_t const B = 2, Q = 3, K = 4, V = 2;
  dt::generator gen(31);
  module_t<double> attention(KeyFeat(3), QueryFeat(2), Hidden(5), 0, gen);
  auto const queries = dt::randn<double>(gen, Queries(Q), Batch(B), QueryFeat(2));
  auto const keys = dt::randn<double>(gen, KVPairs(K), Batch(B), KeyFeat(3));
  auto const values = dt::randn<double>(gen, KVPairs(K), Batch(B), ValueFeat(V));
  auto const out = attention(queries, keys, values);
  STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(out)>::specs, dt::dims<Queries, Batch, ValueFeat>>);
  // The loops read by name, so they need no transposes.
  auto const want = naive_additive(attention, queries, keys, values, [&](index_t, index_t) { return K; });
  std::size_t o = 0;
  for (index_t b = 0; b < B; ++b)
    for (index_t q = 0; q < Q; ++q)
      for (index_t j = 0; j < V; ++j) CHECK(out(Batch(b), Queries(q), ValueFeat(j)) == Approx(want.output[o++]).margin(1e-12));
}

TEST_CASE("additive_attention: run-time errors name the layer, the dim and the sizes", "[nn][attention]") {
  dt::generator gen(4);
  module_t<float> attention(KeyFeat(2), QueryFeat(20), Hidden(8), 0, gen);
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const queries = dt::randn<float>(gen, Batch(2), Queries(1), QueryFeat(19));
  REQUIRE_THROWS_AS(attention(queries, keys, values), dt::shape_error);
  REQUIRE_THROWS_WITH(attention(queries, keys, values),
                      Catch::StartsWith("additive_attention: queries: extent mismatch for dimension QueryFeat: "
                                        "19 (queries) vs 20 (W_q)"));
  auto const good_queries = dt::randn<float>(gen, Batch(2), Queries(1), QueryFeat(20));
  auto const short_values = dt::ones<float>(Batch(2), KVPairs(6), ValueFeat(4));
  REQUIRE_THROWS_AS(attention(good_queries, keys, short_values), dt::shape_error);
  REQUIRE_THROWS_WITH(attention(good_queries, keys, short_values),
                      Catch::StartsWith("additive_attention: values: extent mismatch for dimension KVPairs: "
                                        "10 (keys) vs 6 (values)"));
}

}  // namespace additive_attention_test

namespace additive_attention_test {

TEST_CASE("additive_attention: operands' dims in any order, by name", "[nn][attention]") {
  // Keys and values left time-first ([KVPairs, Batch, …], as a GRU's
  // outputs are): the same numbers as batch-first, weights included.
  dt::generator gen(6);
  module_t<double> attention(KeyFeat(3), QueryFeat(5), Hidden(4), 0, gen);
  auto const queries = dt::randn<double>(gen, Batch(2), Queries(2), QueryFeat(5));
  auto const keys = dt::randn<double>(gen, Batch(2), KVPairs(4), KeyFeat(3));
  auto const values = dt::randn<double>(gen, Batch(2), KVPairs(4), ValueFeat(2));
  dt::tensor<std::int64_t, Batch> const lens{3, 4};
  dt::tensor<double, Batch, Queries, ValueFeat> const batch_first = attention(queries, keys, values, lens);
  auto const weights = attention.attention_weights<Batch, Queries, KVPairs>();
  auto const time_first = attention(queries, dt::permute<KVPairs, Batch, KeyFeat>(keys),
                                    dt::permute<KVPairs, Batch, ValueFeat>(values), lens);
  CHECK(dt::max_abs_diff(batch_first, time_first) < 1e-12);
  CHECK(dt::max_abs_diff(weights, attention.attention_weights<Batch, Queries, KVPairs>()) < 1e-12);
}

}  // namespace additive_attention_test
