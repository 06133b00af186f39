// Tests of nn/attention/multi_head_attention.hpp: d2l's MultiHeadAttention
// in its named form and in d2l's (transpose_qkv / transpose_output), the two
// against each other and against a naive implementation written here
// (double precision); transpose_qkv and transpose_output against d2l's
// reshape/permute index formulas; heads that do not divide; the kept
// weights; dropout; parameters by their state_dict keys.
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

namespace multi_head_attention_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);

namespace dt = dimtensor;
using dt::index_t;
using dt::nn::BatchHeads;
using dt::nn::HeadFeat;
using dt::nn::Heads;
using test_support::tolerance;

// weight(o, i) of a layer, whatever its input dim is called (In, or In' for a square layer).
template <class Out, class Layer>
double weight_at(Layer const& layer, index_t o, index_t i) {
  using in_t = typename Layer::weight_in;
  return double(layer.weight(Out(o), in_t(i)));
}
template <class Out, class Layer>
double bias_at(Layer const& layer, index_t o) {
  return layer.has_bias() ? double(layer.bias(Out(o))) : 0.0;
}

// The layer applied to row r of x by loops: out[o] = Σ_i W[o, i] x(r, i) + b[o].
template <class Out, class Layer, class Row>
std::vector<double> apply_naive(Layer const& layer, index_t in, Row const& row) {
  std::vector<double> out;
  for (index_t o = 0; o < layer.out_features(); ++o) {
    double acc = bias_at<Out>(layer, o);
    for (index_t i = 0; i < in; ++i) acc += weight_at<Out>(layer, o, i) * row(i);
    out.push_back(acc);
  }
  return out;
}

// d2l's MultiHeadAttention.forward by loops, for queries [Batch, Queries, QF],
// keys [Batch, KVPairs, KF], values [Batch, KVPairs, VF] read by name:
// the output [B, Q, hidden], flat, and the weights [B, heads, Q, K], flat.
struct reference {
  std::vector<double> output, weights;
};
template <class QFeat, class KFeat, class VFeat, class M, class QT, class KT, class VT, class Len>
reference naive_mha(M const& m, QT const& queries, KT const& keys, VT const& values, Len const& len) {
  index_t const B = queries.template extent<Batch>(), Q = queries.template extent<Queries>();
  index_t const K = keys.template extent<KVPairs>();
  index_t const NH = m.W_o.out_features(), H = m.num_heads(), dh = NH / H;
  auto const nb = static_cast<std::size_t>(B);
  std::vector<std::vector<std::vector<double>>> pq(nb), pk(nb), pv(nb);
  for (index_t b = 0; b < B; ++b) {
    for (index_t i = 0; i < Q; ++i)
      pq[std::size_t(b)].push_back(apply_naive<Hidden>(m.W_q, queries.template extent<QFeat>(), [&](index_t f) {
        return double(queries(Batch(b), Queries(i), QFeat(f)));
      }));
    for (index_t k = 0; k < K; ++k) {
      pk[std::size_t(b)].push_back(apply_naive<Hidden>(
          m.W_k, keys.template extent<KFeat>(), [&](index_t f) { return double(keys(Batch(b), KVPairs(k), KFeat(f))); }));
      pv[std::size_t(b)].push_back(apply_naive<Hidden>(m.W_v, values.template extent<VFeat>(), [&](index_t f) {
        return double(values(Batch(b), KVPairs(k), VFeat(f)));
      }));
    }
  }
  reference r;
  r.weights.assign(std::size_t(B * H * Q * K), 0.0);
  for (index_t b = 0; b < B; ++b)
    for (index_t i = 0; i < Q; ++i) {
      std::vector<double> concat(std::size_t(NH), 0.0);
      for (index_t h = 0; h < H; ++h) {
        auto const row = test_support::attend_row(
            K, dh, len(b, i),
            [&](index_t k) {
              double dot = 0;
              for (index_t j = 0; j < dh; ++j)
                dot += pq[std::size_t(b)][std::size_t(i)][std::size_t(h * dh + j)] *
                       pk[std::size_t(b)][std::size_t(k)][std::size_t(h * dh + j)];
              return dot / std::sqrt(double(dh));
            },
            [&](index_t k, index_t j) { return pv[std::size_t(b)][std::size_t(k)][std::size_t(h * dh + j)]; });
        for (index_t k = 0; k < K; ++k) r.weights[std::size_t(((b * H + h) * Q + i) * K + k)] = row.weights[std::size_t(k)];
        for (index_t j = 0; j < dh; ++j) concat[std::size_t(h * dh + j)] = row.output[std::size_t(j)];
      }
      auto const out = apply_naive<Hidden>(m.W_o, NH, [&](index_t c) { return concat[std::size_t(c)]; });
      r.output.insert(r.output.end(), out.begin(), out.end());
    }
  return r;
}

TEMPLATE_TEST_CASE("multi_head_attention: both forms against a naive implementation", "[nn][attention]", float) {
  using T = TestType;
  auto const seed = GENERATE(1u, 2u, 3u);
  auto const bias = GENERATE(false, true);
  std::mt19937 rng(seed);
  auto pick = [&](index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(rng); };
  index_t const B = pick(1, 3), Q = pick(1, 4), K = pick(1, 5), H = pick(1, 3), NH = H * pick(1, 3);
  index_t const QF = pick(1, 4), KF = pick(1, 4), VF = pick(1, 4);
  dt::generator gen(seed);
  auto const queries = dt::randn<T>(gen, Batch(B), Queries(Q), QueryFeat(QF));
  auto const keys = dt::randn<T>(gen, Batch(B), KVPairs(K), KeyFeat(KF));
  auto const values = dt::randn<T>(gen, Batch(B), KVPairs(K), ValueFeat(VF));
  auto const lens_1d = dt::randint<std::int32_t>(gen, 1, K + 1, Batch(B));
  auto const lens_2d = dt::randint<std::int64_t>(gen, 0, K + 1, Batch(B), Queries(Q));
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat, T> attention(
      KeyFeat(KF), QueryFeat(QF), ValueFeat(VF), Hidden(NH), Heads(H), 0.5, bias, gen);
  attention.eval();
  CHECK(attention.num_heads() == H);

  auto const check = [&](auto const& named, auto const& d2l, auto const& len) {
    using out_t = dt::tensor<T, Batch, Queries, Hidden>;
    STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(named)>, out_t>);
    STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(d2l)>, out_t>);
    auto const want = naive_mha<QueryFeat, KeyFeat, ValueFeat>(attention, queries, keys, values, len);
    std::size_t o = 0;
    for (index_t b = 0; b < B; ++b)
      for (index_t i = 0; i < Q; ++i)
        for (index_t c = 0; c < NH; ++c, ++o) {
          CHECK(double(named(Batch(b), Queries(i), Hidden(c))) == Approx(want.output[o]).margin(tolerance<T>()));
          CHECK(double(d2l(Batch(b), Queries(i), Hidden(c))) == Approx(want.output[o]).margin(tolerance<T>()));
          // The two forms compute the same thing in the same order.
          CHECK(std::abs(double(named(Batch(b), Queries(i), Hidden(c))) - double(d2l(Batch(b), Queries(i), Hidden(c)))) <=
                1e-6);
        }
    // The d2l form ran last: its weights are [BatchHeads, Queries, KVPairs], entry b·heads + h.
    auto const& w = attention.attention.template attention_weights<BatchHeads, Queries, KVPairs>();
    for (index_t b = 0; b < B; ++b)
      for (index_t h = 0; h < H; ++h)
        for (index_t i = 0; i < Q; ++i)
          for (index_t k = 0; k < K; ++k)
            CHECK(double(w(BatchHeads(b * H + h), Queries(i), KVPairs(k))) ==
                  Approx(want.weights[std::size_t(((b * H + h) * Q + i) * K + k)]).margin(tolerance<T>()));
  };
  SECTION("no valid_lens") {
    auto const named = attention(queries, keys, values);
    auto const d2l = attention.forward_d2l(queries, keys, values);
    check(named, d2l, [&](index_t, index_t) { return K; });
  }
  SECTION("std::nullopt") {
    auto const named = attention(queries, keys, values, std::nullopt);
    auto const d2l = attention.forward_d2l(queries, keys, values, std::nullopt);
    check(named, d2l, [&](index_t, index_t) { return K; });
  }
  SECTION("1-D valid_lens [Batch]") {
    auto const named = attention(queries, keys, values, lens_1d);
    auto const d2l = attention.forward_d2l(queries, keys, values, lens_1d);
    check(named, d2l, [&](index_t b, index_t) { return index_t(lens_1d(Batch(b))); });
  }
  SECTION("2-D valid_lens [Batch, Queries]") {
    auto const named = attention(queries, keys, values, lens_2d);
    auto const d2l = attention.forward_d2l(queries, keys, values, lens_2d);
    check(named, d2l, [&](index_t b, index_t q) { return index_t(lens_2d(Batch(b), Queries(q))); });
  }
  SECTION("std::optional valid_lens") {
    auto const named = attention(queries, keys, values, std::optional(lens_2d));
    auto const d2l = attention.forward_d2l(queries, keys, values, std::optional(lens_2d));
    check(named, d2l, [&](index_t b, index_t q) { return index_t(lens_2d(Batch(b), Queries(q))); });
  }
}

TEST_CASE("multi_head_attention: the book's shape test and self-attention", "[nn][attention]") {
  // num_hiddens 100, 5 heads, dropout 0.5, eval; X ones (2, 4, 100), Y ones (2, 6, 100), valid_lens [3, 2].
  dt::generator gen(0);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(100), Hidden(100), Hidden(100), Hidden(100),
                                                                   Heads(5), 0.5, false, gen);
  attention.eval();
  auto const X = dt::ones<float>(Batch(2), Queries(4), Hidden(100));
  auto const Y = dt::ones<float>(Batch(2), KVPairs(6), Hidden(100));
  auto const valid_lens = dt::tensor<int, Batch>{3, 2};
  auto const named = attention(X, Y, Y, valid_lens);
  auto const d2l = attention.forward_d2l(X, Y, Y, valid_lens);
  CHECK(named.extents() == std::array<index_t, 3>{2, 4, 100});
  CHECK(d2l.extents() == std::array<index_t, 3>{2, 4, 100});

  // Self-attention: the keys and values are X with its sequence dim renamed.
  auto const Z = dt::randn<float>(gen, Batch(2), Queries(4), Hidden(100));
  auto const kv = dt::rename<Queries, KVPairs>(Z);
  auto const self = attention(Z, kv, kv, valid_lens);
  auto const want = naive_mha<Hidden, Hidden, Hidden>(attention, Z, kv, kv,
                                                      [&](index_t b, index_t) { return index_t(valid_lens(Batch(b))); });
  std::size_t o = 0;
  for (index_t b = 0; b < 2; ++b)
    for (index_t i = 0; i < 4; ++i)
      for (index_t c = 0; c < 100; ++c) CHECK(self(Batch(b), Queries(i), Hidden(c)) == Approx(want.output[o++]).margin(2e-5));

  // The named form keeps its weights as [Batch, Queries, Heads, KVPairs]: the d2l ones, regrouped.
  (void)attention.forward_d2l(Z, kv, kv, valid_lens);
  auto const w_d2l = attention.attention.attention_weights<BatchHeads, Queries, KVPairs>().clone();
  (void)attention(Z, kv, kv, valid_lens);
  auto const& w_named = attention.attention.attention_weights<Batch, Queries, Heads, KVPairs>();
  for (index_t b = 0; b < 2; ++b)
    for (index_t h = 0; h < 5; ++h)
      for (index_t i = 0; i < 4; ++i)
        for (index_t k = 0; k < 4; ++k)
          CHECK(w_named(Batch(b), Queries(i), Heads(h), KVPairs(k)) ==
                Approx(w_d2l(BatchHeads(b * 5 + h), Queries(i), KVPairs(k))).margin(1e-6));
}

TEMPLATE_TEST_CASE("transpose_qkv and transpose_output: d2l's reshape/permute index formulas", "[nn][attention]",
                   float) {
  using T = TestType;
  index_t const B = 2, L = 3, H = 3, dh = 2, NH = H * dh;
  dt::generator gen(6);
  auto const X = dt::randn<T>(gen, Batch(B), Queries(L), Hidden(NH));
  // d2l: X.reshape(B, L, H, -1).permute(0, 2, 1, 3).reshape(-1, L, dh): out[b·H + h, l, j] = X[b, l, h·dh + j].
  auto const heads = dt::nn::transpose_qkv<Batch, Hidden>(X, Heads(H));
  STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(heads)>::specs, dt::dims<BatchHeads, Queries, HeadFeat>>);
  REQUIRE(heads.extents() == std::array<index_t, 3>{B * H, L, dh});
  for (index_t b = 0; b < B; ++b)
    for (index_t h = 0; h < H; ++h)
      for (index_t l = 0; l < L; ++l)
        for (index_t j = 0; j < dh; ++j)
          CHECK(heads(BatchHeads(b * H + h), Queries(l), HeadFeat(j)) == X(Batch(b), Queries(l), Hidden(h * dh + j)));

  // transpose_output: out[b, l, h·dh + j] = Y[b·H + h, l, j].
  auto const Y = dt::randn<T>(gen, BatchHeads(B * H), Queries(L), HeadFeat(dh));
  auto const joined = dt::nn::transpose_output<Batch, Hidden>(Y, H);
  STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(joined)>::specs, dt::dims<Batch, Queries, Hidden>>);
  REQUIRE(joined.extents() == std::array<index_t, 3>{B, L, NH});
  for (index_t b = 0; b < B; ++b)
    for (index_t h = 0; h < H; ++h)
      for (index_t l = 0; l < L; ++l)
        for (index_t j = 0; j < dh; ++j)
          CHECK(joined(Batch(b), Queries(l), Hidden(h * dh + j)) == Y(BatchHeads(b * H + h), Queries(l), HeadFeat(j)));

  // transpose_output(transpose_qkv(X)) is X, element for element, lazy input included.
  auto const back = dt::nn::transpose_output<Batch, Hidden>(dt::nn::transpose_qkv<Batch, Hidden>(X * T(1), Heads(H)), H);
  for (index_t b = 0; b < B; ++b)
    for (index_t l = 0; l < L; ++l)
      for (index_t c = 0; c < NH; ++c) CHECK(back(Batch(b), Queries(l), Hidden(c)) == X(Batch(b), Queries(l), Hidden(c)));
  // And the other way round.
  auto const again = dt::nn::transpose_qkv<Batch, Hidden>(joined, Heads(H));
  for (index_t bh = 0; bh < B * H; ++bh)
    for (index_t l = 0; l < L; ++l)
      for (index_t j = 0; j < dh; ++j)
        CHECK(again(BatchHeads(bh), Queries(l), HeadFeat(j)) == Y(BatchHeads(bh), Queries(l), HeadFeat(j)));

  // d2l's plain number of heads gives the same heads.
  auto const numbered = dt::nn::transpose_qkv<Batch, Hidden>(X, H);
  for (index_t bh = 0; bh < B * H; ++bh)
    for (index_t l = 0; l < L; ++l)
      for (index_t j = 0; j < dh; ++j)
        CHECK(numbered(BatchHeads(bh), Queries(l), HeadFeat(j)) == heads(BatchHeads(bh), Queries(l), HeadFeat(j)));
  // A static head count gives the same heads.
  auto const fixed_heads = dt::nn::transpose_qkv<Batch, Hidden>(X, Heads::fixed<3>{});
  for (index_t bh = 0; bh < B * H; ++bh)
    for (index_t l = 0; l < L; ++l)
      for (index_t j = 0; j < dh; ++j)
        CHECK(fixed_heads(BatchHeads(bh), Queries(l), HeadFeat(j)) == heads(BatchHeads(bh), Queries(l), HeadFeat(j)));
}

TEST_CASE("transpose_qkv: Batch and Hidden anywhere, e.g. [Queries, Batch, Hidden]", "[nn][attention]") {
  index_t const B = 2, L = 3, H = 2, dh = 3;
  dt::generator gen(7);
  auto const X = dt::randn<double>(gen, Queries(L), Batch(B), Hidden(H * dh));
  auto const heads = dt::nn::transpose_qkv<Batch, Hidden>(X, Heads(H));
  STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(heads)>::specs, dt::dims<Queries, BatchHeads, HeadFeat>>);
  for (index_t b = 0; b < B; ++b)
    for (index_t h = 0; h < H; ++h)
      for (index_t l = 0; l < L; ++l)
        for (index_t j = 0; j < dh; ++j)
          CHECK(heads(BatchHeads(b * H + h), Queries(l), HeadFeat(j)) == X(Batch(b), Queries(l), Hidden(h * dh + j)));
  auto const back = dt::nn::transpose_output<Batch, Hidden>(heads, H);
  STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(back)>::specs, dt::dims<Queries, Batch, Hidden>>);
  for (index_t b = 0; b < B; ++b)
    for (index_t l = 0; l < L; ++l)
      for (index_t c = 0; c < H * dh; ++c) CHECK(back(Batch(b), Queries(l), Hidden(c)) == X(Batch(b), Queries(l), Hidden(c)));
}

TEST_CASE("multi_head_attention: heads that do not divide the hidden size are a value_error", "[nn][attention]") {
  using mha = dt::nn::multi_head_attention<Queries, KVPairs, Hidden>;
  REQUIRE_THROWS_AS(mha(Hidden(100), Hidden(100), Hidden(100), Hidden(100), Heads(3)), dt::value_error);
  REQUIRE_THROWS_WITH(mha(Hidden(100), Hidden(100), Hidden(100), Hidden(100), Heads(3)),
                      Catch::Contains("multi_head_attention") && Catch::Contains("3 heads") &&
                          Catch::Contains("Hidden=100"));
  REQUIRE_THROWS_WITH(mha(Hidden(8), Hidden(8), Hidden(8), Hidden(8), Heads(0)),
                      Catch::Contains("multi_head_attention") && Catch::Contains("positive"));
  // A static hidden size with a run-time head count is checked at run time.
  REQUIRE_THROWS_AS(mha(Hidden(8), Hidden(8), Hidden(8), Hidden::fixed<8>{}, Heads(3)), dt::value_error);
  mha const fixed(Hidden(100), Hidden(100), Hidden(100), Hidden::fixed<100>{}, Heads::fixed<5>{});
  CHECK(fixed.num_heads() == 5);
  CHECK(fixed.W_o.out_features() == 100);

  auto const X = dt::ones<float>(Batch(2), Queries(3), Hidden(6));
  REQUIRE_THROWS_AS((dt::nn::transpose_qkv<Batch, Hidden>(X, Heads(4))), dt::value_error);
  REQUIRE_THROWS_WITH((dt::nn::transpose_qkv<Batch, Hidden>(X, Heads(4))),
                      Catch::Contains("Hidden") && Catch::Contains("6") && Catch::Contains("4"));
  auto const Y = dt::ones<float>(BatchHeads(6), Queries(3), HeadFeat(2));
  REQUIRE_THROWS_AS((dt::nn::transpose_output<Batch, Hidden>(Y, 4)), dt::value_error);
  REQUIRE_THROWS_WITH((dt::nn::transpose_output<Batch, Hidden>(Y, 4)),
                      Catch::Contains("transpose_output") && Catch::Contains("4 heads") &&
                          Catch::Contains("BatchHeads=6"));
}

TEST_CASE("multi_head_attention: attention_weights<Dims...>() checks the dims it is asked for", "[nn][attention]") {
  dt::generator gen(9);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(6), Hidden(6), Hidden(6), Hidden(6), Heads(2),
                                                                   0, false, gen);
  REQUIRE_THROWS_AS((attention.attention.attention_weights<Batch, Queries, Heads, KVPairs>()), dt::value_error);
  REQUIRE_THROWS_WITH((attention.attention.attention_weights<Batch, Queries, Heads, KVPairs>()),
                      Catch::Contains("no attention weights yet"));
  auto const X = dt::randn<float>(gen, Batch(2), Queries(3), Hidden(6));
  auto const Y = dt::randn<float>(gen, Batch(2), KVPairs(4), Hidden(6));
  (void)attention(X, Y, Y);
  CHECK(attention.attention.attention_weights<Batch, Queries, Heads, KVPairs>().extents() ==
        std::array<index_t, 4>{2, 3, 2, 4});
  REQUIRE_THROWS_WITH((attention.attention.attention_weights<BatchHeads, Queries, KVPairs>()),
                      Catch::Contains("dot_product_attention") &&
                          Catch::Contains("[Batch=2, Queries=3, Heads=2, KVPairs=4]") &&
                          Catch::Contains("not [BatchHeads, Queries, KVPairs]"));
  (void)attention.forward_d2l(X, Y, Y);
  CHECK(attention.attention.attention_weights<BatchHeads, Queries, KVPairs>().extents() ==
        std::array<index_t, 3>{4, 3, 4});
  REQUIRE_THROWS_WITH((attention.attention.attention_weights<Batch, Queries, Heads, KVPairs>()),
                      Catch::Contains("[BatchHeads=4, Queries=3, KVPairs=4]") &&
                          Catch::Contains("not [Batch, Queries, Heads, KVPairs]"));
}

TEST_CASE("multi_head_attention: dropout changes the output in train mode, not in eval mode", "[nn][attention]") {
  dt::generator gen(10);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(8), Hidden(8), Hidden(8), Hidden(8), Heads(2),
                                                                   0.5, true, gen);
  CHECK(attention.attention.dropout.is_training());
  auto const X = dt::randn<float>(gen, Batch(2), Queries(3), Hidden(8));
  auto const Y = dt::randn<float>(gen, Batch(2), KVPairs(5), Hidden(8));
  auto const lens = dt::tensor<int, Batch>{5, 3};
  auto const max_difference = [](auto const& a, auto const& b) {
    double d = 0;
    for (index_t i = 0; i < 2; ++i)
      for (index_t q = 0; q < 3; ++q)
        for (index_t c = 0; c < 8; ++c)
          d = std::max(d, double(std::abs(a(Batch(i), Queries(q), Hidden(c)) - b(Batch(i), Queries(q), Hidden(c)))));
    return d;
  };
  auto const trained = attention(X, Y, Y, lens);
  auto const trained_d2l = attention.forward_d2l(X, Y, Y, lens);
  CHECK(&attention.eval() == &attention);
  CHECK_FALSE(attention.attention.dropout.is_training());
  auto const once = attention(X, Y, Y, lens);
  auto const twice = attention(X, Y, Y, lens);
  auto const d2l = attention.forward_d2l(X, Y, Y, lens);
  CHECK(max_difference(once, twice) == 0.0);
  CHECK(max_difference(once, d2l) <= 1e-6);
  CHECK(max_difference(trained, once) > 1e-3);
  CHECK(max_difference(trained_d2l, once) > 1e-3);
  CHECK(&attention.train() == &attention);
  CHECK(attention.attention.dropout.is_training());
}

TEST_CASE("multi_head_attention: parameters under d2l's keys, drawn in d2l's order", "[nn][attention]") {
  dt::generator gen(11), same(11);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat> const no_bias(
      KeyFeat(3), QueryFeat(2), ValueFeat(5), Hidden(4), Heads(2), 0.1, false, gen);
  CHECK(dt::nn::parameter_names(no_bias) ==
        std::vector<std::string>{"W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"});
  CHECK(dt::nn::parameter_count(no_bias) == 4 * 2 + 4 * 3 + 4 * 5 + 4 * 4);
  // d2l's __init__ builds W_q, W_k, W_v, W_o in that order.
  dt::nn::linear<QueryFeat, Hidden> const W_q(QueryFeat(2), Hidden(4), false, same);
  dt::nn::linear<KeyFeat, Hidden> const W_k(KeyFeat(3), Hidden(4), false, same);
  dt::nn::linear<ValueFeat, Hidden> const W_v(ValueFeat(5), Hidden(4), false, same);
  dt::nn::linear<Hidden, Hidden> const W_o(Hidden(4), Hidden(4), false, same);
  for (index_t o = 0; o < 4; ++o) {
    for (index_t i = 0; i < 2; ++i) CHECK(no_bias.W_q.weight(Hidden(o), QueryFeat(i)) == W_q.weight(Hidden(o), QueryFeat(i)));
    for (index_t i = 0; i < 3; ++i) CHECK(no_bias.W_k.weight(Hidden(o), KeyFeat(i)) == W_k.weight(Hidden(o), KeyFeat(i)));
    for (index_t i = 0; i < 5; ++i) CHECK(no_bias.W_v.weight(Hidden(o), ValueFeat(i)) == W_v.weight(Hidden(o), ValueFeat(i)));
    for (index_t i = 0; i < 4; ++i)
      CHECK(no_bias.W_o.weight(Hidden(o), dt::prime<Hidden>(i)) == W_o.weight(Hidden(o), dt::prime<Hidden>(i)));
  }

  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> const with_bias(Hidden(4), Hidden(4), Hidden(4), Hidden(4),
                                                                         Heads(2), 0.1, true, gen);
  CHECK(dt::nn::parameter_names(with_bias) ==
        std::vector<std::string>{"W_q.weight", "W_q.bias", "W_k.weight", "W_k.bias", "W_v.weight", "W_v.bias",
                                 "W_o.weight", "W_o.bias"});
  CHECK(dt::nn::parameter_count(with_bias) == 4 * (4 * 4 + 4));
  std::vector<std::string> keys;
  with_bias.for_each_parameter([&](std::string const& key, auto const&) { keys.push_back(key); }, "layer.0.");
  CHECK(keys.front() == "layer.0.W_q.weight");
  CHECK(keys.back() == "layer.0.W_o.bias");
}

TEST_CASE("multi_head_attention: a batch of 0 gives the empty result in both forms", "[nn][attention]") {
  // Both forms used to differ here: forward_d2l's transpose_output split
  // BatchHeads=0 into Batch=0 parts and threw "cannot be split into Batch=0 parts".
  dt::generator gen(4);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(6), Hidden(6), Hidden(6), Hidden(6), Heads(2),
                                                                   0, false, gen);
  auto const X = dt::randn<float>(gen, Batch(0), Queries(3), Hidden(6));
  auto const Y = dt::randn<float>(gen, Batch(0), KVPairs(4), Hidden(6));
  auto const valid_lens = dt::zeros<std::int64_t>(Batch(0));
  auto const named = attention(X, Y, Y, valid_lens);
  auto const d2l = attention.forward_d2l(X, Y, Y, valid_lens);
  CHECK(named.extents() == std::array<index_t, 3>{0, 3, 6});
  CHECK(d2l.extents() == std::array<index_t, 3>{0, 3, 6});
  CHECK(attention.attention.attention_weights<BatchHeads, Queries, KVPairs>().extents() ==
        std::array<index_t, 3>{0, 3, 4});

  auto const merged = dt::zeros<float>(BatchHeads(0), Queries(3), HeadFeat(3));
  auto const out = dt::nn::transpose_output<Batch, Hidden>(merged, 2);
  STATIC_REQUIRE(std::is_same_v<decltype(out)::specs, dt::dims<Batch, Queries, Hidden>>);
  CHECK(out.extents() == std::array<index_t, 3>{0, 3, 6});
  // Heads that do not divide are still named.
  auto const three = dt::zeros<float>(BatchHeads(3), Queries(1), HeadFeat(2));
  REQUIRE_THROWS_WITH((dt::nn::transpose_output<Batch, Hidden>(three, 2)),
                      Catch::StartsWith("transpose_output: 2 heads do not divide BatchHeads=3"));
}

}  // namespace multi_head_attention_test

namespace multi_head_attention_test {

TEST_CASE("multi_head_attention: run-time errors name the call and the operands first", "[nn][attention]") {
  dt::generator gen(9);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat> attention(
      KeyFeat(3), QueryFeat(5), ValueFeat(2), Hidden(8), 2, 0.0, false, gen);
  auto const queries = dt::randn<float>(gen, Batch(2), Queries(4), QueryFeat(5));
  auto const keys = dt::randn<float>(gen, Batch(2), KVPairs(6), KeyFeat(3));
  auto const values = dt::randn<float>(gen, Batch(2), KVPairs(6), ValueFeat(2));
  CHECK(attention(queries, keys, values).extents() == std::array<index_t, 3>{2, 4, 8});
  auto const wide_keys = dt::randn<float>(gen, Batch(2), KVPairs(6), KeyFeat(4));
  REQUIRE_THROWS_WITH(attention(queries, wide_keys, values),
                      Catch::StartsWith("multi_head_attention: keys: extent mismatch for dimension KeyFeat: "
                                        "4 (keys) vs 3 (W_k)"));
  auto const short_values = dt::randn<float>(gen, Batch(2), KVPairs(5), ValueFeat(2));
  char const* const want =
      "multi_head_attention: values: extent mismatch for dimension KVPairs: 6 (keys) vs 5 (values)";
  REQUIRE_THROWS_AS(attention(queries, keys, short_values), dt::shape_error);
  REQUIRE_THROWS_WITH(attention(queries, keys, short_values), Catch::StartsWith(want));
  REQUIRE_THROWS_WITH(attention.forward_d2l(queries, keys, short_values), Catch::StartsWith(want));
  // A length past the pairs: the call, then the inner operations as context.
  dt::lengths<KVPairs, Batch> const too_long{2, 7};
  REQUIRE_THROWS_AS(attention(queries, keys, values, too_long), dt::value_error);
  REQUIRE_THROWS_WITH(attention(queries, keys, values, too_long),
                      Catch::StartsWith("multi_head_attention: dot_product_attention: masked_softmax: valid length 7"));
}

}  // namespace multi_head_attention_test
