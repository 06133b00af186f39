// nn::seq2seq_encoder, nn::seq2seq_attention_decoder, nn::encoder_decoder,
// nn::predict_seq2seq and gru::step: the book's shape test, d2l's state_dict
// keys, masked attention rows, gradients against finite differences,
// greedy decoding's stopping rule.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace seq2seq_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);

template <class T = float>
using encoder_t = nn::seq2seq_encoder<Batch, EncSteps, Vocab, Embed, Hidden, T>;
template <class T = float>
using decoder_t = nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, Vocab, Embed, Hidden, T>;
}  // namespace seq2seq_test

using namespace seq2seq_test;

TEST_CASE("seq2seq: the book's shape test", "[nn][seq2seq]") {
  // encoder = d2l.Seq2SeqEncoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
  // decoder = Seq2SeqAttentionDecoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
  dt::generator gen(1);
  encoder_t<> encoder(Vocab(10), Embed(8), Hidden(16), 2, 0, gen);
  decoder_t<> decoder(Vocab(10), Embed(8), Hidden(16), 2, 0, gen);
  encoder.eval();
  decoder.eval();
  auto const X = dt::zeros<std::int64_t>(Batch(4), EncSteps(7));
  auto const Y = dt::zeros<std::int64_t>(Batch(4), DecSteps(7));
  auto state = decoder.init_state(encoder(X), std::nullopt);
  auto [output, next] = decoder(Y, state);
  // (torch.Size([4, 7, 10]), 3, torch.Size([4, 7, 16]), 2, torch.Size([4, 16]))
  STATIC_REQUIRE(std::is_same_v<decltype(output), dt::tensor<float, Batch, DecSteps, Vocab>>);
  CHECK(output.extents() == std::array<dt::index_t, 3>{4, 7, 10});
  CHECK(next.enc_outputs.extents() == std::array<dt::index_t, 3>{4, 7, 16});
  CHECK(next.hidden.extents() == std::array<dt::index_t, 3>{2, 4, 16});
  CHECK(dt::select<nn::Layers>(next.hidden, 0).extents() == std::array<dt::index_t, 2>{4, 16});
  CHECK_FALSE(next.enc_valid_lens.has_value());
  CHECK(decoder.attention_weights().extents() == std::array<dt::index_t, 3>{4, 7, 7});

  // d2l's state_dict keys.
  nn::encoder_decoder net(encoder, decoder);
  auto const names = nn::parameter_names(net);
  std::vector<std::string> const want{
      "encoder.embedding.weight",       "encoder.rnn.weight_ih_l0",       "encoder.rnn.weight_hh_l0",
      "encoder.rnn.bias_ih_l0",         "encoder.rnn.bias_hh_l0",         "encoder.rnn.weight_ih_l1",
      "encoder.rnn.weight_hh_l1",       "encoder.rnn.bias_ih_l1",         "encoder.rnn.bias_hh_l1",
      "decoder.attention.W_k.weight",   "decoder.attention.W_q.weight",   "decoder.attention.w_v.weight",
      "decoder.embedding.weight",       "decoder.rnn.weight_ih_l0",       "decoder.rnn.weight_hh_l0",
      "decoder.rnn.bias_ih_l0",         "decoder.rnn.bias_hh_l0",         "decoder.rnn.weight_ih_l1",
      "decoder.rnn.weight_hh_l1",       "decoder.rnn.bias_ih_l1",         "decoder.rnn.bias_hh_l1",
      "decoder.dense.weight",           "decoder.dense.bias"};
  CHECK(names == want);
  // The GRU reads the context and the embedding: 16 + 8 features.
  CHECK(net.decoder.rnn.input_size() == 24);
}

TEST_CASE("seq2seq: the attention rows are masked by the source lengths and sum to one", "[nn][seq2seq]") {
  dt::generator gen(2);
  nn::encoder_decoder net(encoder_t<>(Vocab(12), Embed(5), Hidden(6), 2, 0, gen),
                          decoder_t<>(Vocab(12), Embed(5), Hidden(6), 2, 0, gen));
  net.eval();
  dt::tensor<std::int64_t, Batch, EncSteps> const X{{1, 2, 3, 4, 5}, {6, 7, 8, 0, 0}};
  dt::tensor<std::int64_t, Batch, DecSteps> const Y{{2, 3, 4}, {5, 6, 7}};
  dt::tensor<std::int64_t, Batch> const lens{5, 3};
  auto const [logits, state] = net(X, Y, lens);
  CHECK(logits.extents() == std::array<dt::index_t, 3>{2, 3, 12});
  REQUIRE(state.enc_valid_lens.has_value());
  auto const w = net.decoder.attention_weights();
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t t = 0; t < 3; ++t) {
      double row = 0;
      for (dt::index_t s = 0; s < 5; ++s) {
        float const v = w(Batch(b), DecSteps(t), EncSteps(s));
        row += v;
        if (b == 1 && s >= 3) CHECK(v == 0.0f);
        if (b == 1 && s < 3) CHECK(v > 0.0f);
      }
      CHECK(row == Approx(1.0).epsilon(1e-6));
    }
  // The valid lengths change the result; none means every step counts.
  auto const [unmasked, unused] = net(X, Y, std::nullopt);
  (void)unused;
  CHECK(unmasked(Batch(0), DecSteps(2), Vocab(3)) == Approx(logits(Batch(0), DecSteps(2), Vocab(3))).epsilon(1e-5));
  CHECK(unmasked(Batch(1), DecSteps(2), Vocab(3)) != logits(Batch(1), DecSteps(2), Vocab(3)));
}

TEST_CASE("seq2seq: gradients of every parameter against finite differences", "[nn][seq2seq][autograd]") {
  dt::generator gen(3);
  nn::encoder_decoder net(encoder_t<double>(Vocab(6), Embed(3), Hidden(4), 2, 0, gen),
                          decoder_t<double>(Vocab(6), Embed(3), Hidden(4), 2, 0, gen));
  net.eval();
  dt::tensor<std::int64_t, Batch, EncSteps> const X{{1, 2, 3}, {4, 5, 0}};
  dt::tensor<std::int64_t, Batch, DecSteps> const Y{{2, 3}, {5, 1}};
  dt::tensor<std::int64_t, Batch> const lens{3, 2};
  // Every parameter in turn, the others held: the weighted sum of the logits.
  int checked = 0;
  net.for_each_parameter([&](std::string const& key, auto& p) {
    INFO(key);
    test_support::check_gradients(
        [&](auto const& q) {
          (void)q;  // q is p itself: the model reads it
          return net(X, Y, lens).first;
        },
        p);
    ++checked;
  });
  CHECK(checked == 23);
}

TEST_CASE("gru::step is one step of the sequence call", "[nn][gru][seq2seq]") {
  dt::generator gen(4);
  nn::gru<DecSteps, Batch, Embed, Hidden, double> rnn(Embed(3), Hidden(4), 2, 0, gen);
  auto const x = test_support::uniform<dt::tensor<double, Batch, Embed>>({2, 3}, 5);
  auto const h0 = test_support::uniform<dt::tensor<double, nn::Layers, Batch, Hidden>>({2, 2, 4}, 6);
  auto const [out, state] = rnn.step(x, h0);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(out)>, dt::tensor<double, Batch, Hidden>>);
  auto const [seq, seq_state] = rnn(dt::unsqueeze<DecSteps, 0>(x), h0);
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t h = 0; h < 4; ++h) {
      CHECK(out(Batch(b), Hidden(h)) == seq(DecSteps(0), Batch(b), Hidden(h)));
      CHECK(state(nn::Layers(1), Batch(b), Hidden(h)) == out(Batch(b), Hidden(h)));
      CHECK(state(nn::Layers(0), Batch(b), Hidden(h)) == seq_state(nn::Layers(0), Batch(b), Hidden(h)));
    }
  auto xs = x;
  test_support::check_gradients([&](auto const& a) { return rnn.step(a, h0).second; }, xs);
}

TEST_CASE("predict_seq2seq: greedy tokens until <eos>, with the attention of each step", "[nn][seq2seq]") {
  dt::generator gen(5);
  nn::encoder_decoder net(encoder_t<>(Vocab(8), Embed(4), Hidden(5), 1, 0.1, gen),
                          decoder_t<>(Vocab(8), Embed(4), Hidden(5), 1, 0.1, gen));
  std::int64_t const bos = 2;
  std::int64_t const eos = 3;
  {
    // A dense bias far above every other logit makes token 6 the argmax at every step.
    dt::autograd::no_grad const setting;
    net.decoder.dense.bias.fill(0.0f);
    net.decoder.dense.bias(Vocab(6)) = 100.0f;
  }
  std::vector<std::int64_t> const src{4, 5, 3, 1, 1};
  auto const six = nn::predict_seq2seq(net, src, 3, bos, eos, 4, true);
  CHECK_FALSE(net.is_training());  // predict puts the model in eval mode
  CHECK(six.tokens == std::vector<std::int64_t>{6, 6, 6, 6});
  REQUIRE(six.attention_weights.size() == 4);
  auto const& w = six.attention_weights.back();
  REQUIRE(w.extents() == std::array<dt::index_t, 3>{1, 1, 5});
  CHECK(w(Batch(0), DecSteps(0), EncSteps(3)) == 0.0f);  // past the valid length
  CHECK(w(Batch(0), DecSteps(0), EncSteps(4)) == 0.0f);
  {
    dt::autograd::no_grad const setting;
    net.decoder.dense.bias(Vocab(eos)) = 200.0f;
  }
  auto const none = nn::predict_seq2seq(net, src, 3, bos, eos, 4);
  CHECK(none.tokens.empty());
  CHECK(none.attention_weights.empty());
  CHECK_THROWS_AS(nn::predict_seq2seq(net, src, 0, bos, eos, 4), dt::value_error);
  CHECK_THROWS_AS(nn::predict_seq2seq(net, src, 6, bos, eos, 4), dt::value_error);
}
