// The Transformer's parts: positional encoding's table and offsets, add &
// norm, the blocks' keys, one-token decoding with cached keys and values
// against the causal whole-sequence pass, gradients against finite
// differences, bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
#include <dimtensor/nn/transformer.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace transformer_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);

template <class T = float>
using encoder_t = nn::transformer_encoder<Batch, EncSteps, Vocab, Hidden, FFN, T>;
template <class T = float>
using decoder_t = nn::transformer_decoder<Batch, DecSteps, EncSteps, Vocab, Hidden, FFN, T>;
}  // namespace transformer_test

using namespace transformer_test;

TEST_CASE("positional_encoding: d2l's table, added from an offset", "[nn][transformer]") {
  nn::positional_encoding<DecSteps, Hidden, double> pe(Hidden(6), 0.0, 50);
  auto const& P = pe.table();
  REQUIRE(P.extents() == std::array<dt::index_t, 2>{50, 6});
  for (dt::index_t i : {0, 1, 7, 49}) {
    for (dt::index_t j = 0; j < 6; j += 2) {
      double const angle = static_cast<double>(i) / std::pow(10000.0, static_cast<double>(j) / 6.0);
      CHECK(P(nn::Positions(i), Hidden(j)) == Approx(std::sin(angle)).margin(1e-12));
      CHECK(P(nn::Positions(i), Hidden(j + 1)) == Approx(std::cos(angle)).margin(1e-12));
    }
  }
  auto const x = dt::zeros<double>(Batch(2), DecSteps(3), Hidden(6));
  auto const at0 = pe(x);
  auto const at5 = pe(x, 5);
  for (dt::index_t t = 0; t < 3; ++t)
    for (dt::index_t j = 0; j < 6; ++j) {
      CHECK(at0(Batch(1), DecSteps(t), Hidden(j)) == P(nn::Positions(t), Hidden(j)));
      CHECK(at5(Batch(0), DecSteps(t), Hidden(j)) == P(nn::Positions(5 + t), Hidden(j)));
    }
  CHECK_THROWS_WITH(pe(x, 48), Catch::Contains("positional_encoding: positions 48 to 51 past the table's 50 rows"));
  CHECK(nn::parameter_names(pe).empty());  // the table is a buffer
}

TEST_CASE("positional_encoding: transformers' sinusoidal table, sines then cosines", "[nn][transformer]") {
  nn::positional_encoding<DecSteps, Hidden, double> pe(Hidden(6), 0.0,
                                                       {.layout = nn::positional_layout::halves, .max_len = 20});
  auto const& P = pe.table();
  REQUIRE(P.extents() == std::array<dt::index_t, 2>{20, 6});
  for (dt::index_t i : {0, 1, 7, 19}) {
    for (dt::index_t j = 0; j < 3; ++j) {
      double const angle = static_cast<double>(i) / std::pow(10000.0, 2.0 * static_cast<double>(j) / 6.0);
      // computed in double, rounded to float (transformers' float32 table)
      CHECK(P(nn::Positions(i), Hidden(j)) == static_cast<double>(static_cast<float>(std::sin(angle))));
      CHECK(P(nn::Positions(i), Hidden(3 + j)) == static_cast<double>(static_cast<float>(std::cos(angle))));
    }
  }
  CHECK_THROWS_WITH(pe(dt::zeros<double>(Batch(1), DecSteps(21), Hidden(6))),
                    Catch::Contains("positions 0 to 21 past the table's 20 rows"));
}

TEST_CASE("add_norm: ln(dropout(y) + x), d2l's keys", "[nn][transformer]") {
  nn::add_norm<Hidden, double> an(Hidden(4), 0.5);
  an.eval();
  auto const x = test_support::uniform<dt::tensor<double, Batch, Hidden>>({2, 4}, 1);
  auto const y = test_support::uniform<dt::tensor<double, Batch, Hidden>>({2, 4}, 2);
  auto const out = an(x, y);
  for (dt::index_t b = 0; b < 2; ++b) {
    double mean = 0;
    for (dt::index_t j = 0; j < 4; ++j) mean += (x(Batch(b), Hidden(j)) + y(Batch(b), Hidden(j))) / 4;
    double var = 0;
    for (dt::index_t j = 0; j < 4; ++j) var += std::pow(x(Batch(b), Hidden(j)) + y(Batch(b), Hidden(j)) - mean, 2) / 4;
    for (dt::index_t j = 0; j < 4; ++j) {
      double const want = (x(Batch(b), Hidden(j)) + y(Batch(b), Hidden(j)) - mean) / std::sqrt(var + 1e-5);
      CHECK(out(Batch(b), Hidden(j)) == Approx(want).epsilon(1e-12));
    }
  }
  CHECK(nn::parameter_names(an) == std::vector<std::string>{"ln.weight", "ln.bias"});
  an.train();
  CHECK(an.dropout.is_training());
}

TEST_CASE("transformer_encoder_block: options by name (BERT's layer: biases, GELU, eps 1e-12)", "[nn][transformer]") {
  dt::generator gen(9);
  using block_t = nn::transformer_encoder_block<EncSteps, Hidden, FFN, double>;
  block_t d2l(Hidden(8), FFN(16), 2, {}, gen);
  CHECK(nn::parameter_names(d2l).size() == 4 + 2 + 4 + 2);   // no attention biases, FFN biases
  CHECK(d2l.ffn.act() == nn::activation::relu);
  CHECK(d2l.addnorm1.ln.eps() == 1e-5);
  block_t bert(Hidden(8), FFN(16), 2,
               {.act = nn::activation::gelu, .attention_bias = true, .eps = 1e-12, .dropout = 0.1,
                .attention_dropout = 0.2},
               gen);
  auto const names = nn::parameter_names(bert);
  CHECK(names.size() == 8 + 2 + 4 + 2);
  CHECK(names[1] == "attention.W_q.bias");
  CHECK(bert.ffn.act() == nn::activation::gelu);
  CHECK(bert.addnorm1.ln.eps() == 1e-12);
  CHECK(bert.addnorm2.ln.eps() == 1e-12);
  CHECK(bert.addnorm1.dropout.p() == 0.1);
  block_t bare(Hidden(8), FFN(16), 2, {.ffn_bias = false}, gen);
  CHECK(nn::parameter_names(bare).size() == 4 + 2 + 2 + 2);
  // the block runs with its options: GELU between the FFN's layers
  bert.eval();
  auto const x = test_support::uniform<dt::tensor<double, Batch, EncSteps, Hidden>>({2, 3, 8}, 3);
  auto const y = bert(x);
  auto const h = bert.addnorm1(x, bert.attention(x, dt::rename<EncSteps, nn::SelfKeys>(x), dt::rename<EncSteps, nn::SelfKeys>(x)));
  auto const want = bert.addnorm2(h, bert.ffn.dense2(dt::gelu(bert.ffn.dense1(h))));
  CHECK(dt::max_abs_diff(y, want) < 1e-12);

  // pre-LN: x + attention(ln1(x)), then h + ffn(ln2(h))
  block_t pre(Hidden(8), FFN(16), 2, {.attention_bias = true, .pre_norm = true}, gen);
  pre.eval();
  CHECK(pre.pre_norm());
  CHECK_FALSE(bert.pre_norm());
  auto const n1 = pre.addnorm1.ln(x);
  auto const k1 = dt::rename<EncSteps, nn::SelfKeys>(n1);
  auto const h1 = dt::eval(x + pre.attention(n1, k1, k1));
  auto const want_pre = dt::eval(h1 + pre.ffn(pre.addnorm2.ln(h1)));
  CHECK(dt::max_abs_diff(pre(x), want_pre) < 1e-12);

  // step(): two steps, then one, with the keys and values kept, equal the
  // whole sequence with causal lengths per query, post-LN and pre-LN
  dt::tensor<std::int64_t, Batch, EncSteps> const causal{{1, 2, 3}, {1, 2, 3}};
  using heads_t = dt::tensor<double, Batch, nn::SelfKeys, nn::Heads, nn::HeadFeat>;
  for (block_t* blk : {&bert, &pre}) {
    auto const whole = (*blk)(x, causal);
    std::optional<heads_t> keys;
    std::optional<heads_t> values;
    dt::tensor<std::int64_t, Batch, EncSteps> const first{{1, 2}, {1, 2}};
    dt::tensor<std::int64_t, Batch, EncSteps> const second{{3}, {3}};
    auto const a = blk->step(dt::eval(dt::slice<EncSteps>(x, 0, 2)), keys, values, first);
    REQUIRE(keys->extent<nn::SelfKeys>() == 2);
    auto const b = blk->step(dt::eval(dt::slice<EncSteps>(x, 2, 3)), keys, values, second);
    CHECK(keys->extent<nn::SelfKeys>() == 3);
    CHECK(values->extent<nn::SelfKeys>() == 3);
    CHECK(dt::max_abs_diff(a, dt::slice<EncSteps>(whole, 0, 2)) < 1e-12);
    CHECK(dt::max_abs_diff(b, dt::slice<EncSteps>(whole, 2, 3)) < 1e-12);
  }
}

TEST_CASE("transformer: one token at a time with cached keys equals the causal whole-sequence pass",
          "[nn][transformer]") {
  dt::generator gen(11);
  nn::encoder_decoder net(encoder_t<double>(Vocab(9), Hidden(8), FFN(12), 2, 2, 0.0, false, gen),
                          decoder_t<double>(Vocab(9), Hidden(8), FFN(12), 2, 2, 0.0, gen));
  dt::tensor<std::int64_t, Batch, EncSteps> const X{{1, 2, 3, 4}, {5, 6, 1, 1}};
  dt::tensor<std::int64_t, Batch> const lens{4, 2};
  dt::tensor<std::int64_t, Batch, DecSteps> const Y{{2, 7, 3, 8, 4}, {2, 5, 5, 6, 3}};
  // Training mode with dropout 0: query t sees steps 0..t, the whole sequence at once.
  net.train();
  auto const [whole, whole_state] = net(X, Y, lens);
  CHECK(whole_state.steps_so_far == 5);
  // Eval mode, one step per call, the state carrying the keys and the positions.
  net.eval();
  auto state = net.decoder.init_state(net.encoder(X, lens), lens);
  for (dt::index_t t = 0; t < 5; ++t) {
    auto const step = dt::slice<DecSteps>(Y, t, t + 1);
    auto [logits, next] = net.decoder(step, std::move(state));
    state = std::move(next);
    REQUIRE(state.key_values[0].has_value());
    CHECK(state.key_values[1]->extent<nn::SelfKeys>() == t + 1);
    for (dt::index_t b = 0; b < 2; ++b)
      for (dt::index_t v = 0; v < 9; ++v) {
        CHECK(logits(Batch(b), DecSteps(0), Vocab(v)) ==
              Approx(whole(Batch(b), DecSteps(t), Vocab(v))).margin(1e-12));
      }
    // The self-attention of this step spans every step so far.
    CHECK(net.decoder.attention_weights().self.at(1).extent<nn::SelfKeys>() == t + 1);
  }
  // Attention over the encoder is masked by the source lengths.
  auto const cross = net.decoder.attention_weights().cross.at(0);
  for (dt::index_t h = 0; h < 2; ++h) {
    CHECK(cross(Batch(1), DecSteps(0), nn::Heads(h), EncSteps(2)) == 0.0);
    CHECK(cross(Batch(1), DecSteps(0), nn::Heads(h), EncSteps(1)) > 0.0);
  }
}

TEST_CASE("transformer: d2l's keys, and gradients against finite differences", "[nn][transformer][autograd]") {
  dt::generator gen(12);
  nn::encoder_decoder net(encoder_t<double>(Vocab(6), Hidden(4), FFN(6), 2, 1, 0.0, false, gen),
                          decoder_t<double>(Vocab(6), Hidden(4), FFN(6), 2, 1, 0.0, gen));
  auto const names = nn::parameter_names(net);
  REQUIRE(names.size() == 1 + 12 + 1 + 18 + 2);
  CHECK(names[1] == "encoder.blks.0.attention.W_q.weight");
  CHECK(names[14] == "decoder.blks.0.attention1.W_q.weight");
  CHECK(names.back() == "decoder.dense.bias");
  net.train();
  dt::tensor<std::int64_t, Batch, EncSteps> const X{{1, 2, 3}, {4, 5, 0}};
  dt::tensor<std::int64_t, Batch, DecSteps> const Y{{2, 3}, {5, 1}};
  dt::tensor<std::int64_t, Batch> const lens{3, 2};
  int checked = 0;
  net.for_each_parameter([&](std::string const& key, auto& p) {
    INFO(key);
    test_support::check_gradients([&](auto const&) { return net(X, Y, lens).first; }, p);
    ++checked;
  });
  CHECK(checked == 34);
}

TEST_CASE("transformer: greedy decoding through predict_seq2seq, with every block's weights", "[nn][transformer]") {
  dt::generator gen(13);
  nn::encoder_decoder net(encoder_t<>(Vocab(8), Hidden(8), FFN(8), 2, 2, 0.1, false, gen),
                          decoder_t<>(Vocab(8), Hidden(8), FFN(8), 2, 2, 0.1, gen));
  {
    dt::autograd::no_grad const setting;
    net.decoder.dense.bias.fill(0.0f);
    net.decoder.dense.bias(Vocab(5)) = 100.0f;
  }
  auto const out = nn::predict_seq2seq(net, std::vector<std::int64_t>{4, 6, 3, 1}, 3, 2, 3, 3, true);
  CHECK(out.tokens == std::vector<std::int64_t>{5, 5, 5});
  REQUIRE(out.attention_weights.size() == 3);
  CHECK(out.attention_weights[2].self.size() == 2);
  CHECK(out.attention_weights[2].self[0].extent<nn::SelfKeys>() == 3);  // the third step sees three
  CHECK(out.attention_weights[2].cross[1].extent<EncSteps>() == 4);
}
