// d2l's Seq2SeqEncoder and Seq2SeqAttentionDecoder as a user writes them
// with the module protocol and the library's parts (46 code lines between
// the markers; d2l's two classes are 44), checked against the library's
// nn::seq2seq_encoder / nn::seq2seq_attention_decoder: the same state_dict
// keys (weights saved from one load into the other) and the same logits,
// state and attention weights.
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/parameters.hpp>
#include <dimtensor/nn/seq2seq.hpp>

#include "unit/support/files.hpp"

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace seq2seq_user_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(AttnHidden);
DIMTENSOR_DIM(DecIn);

// --- the user's model, begin ---
struct encoder : nn::module<encoder> {
  BOOST_HANA_DEFINE_STRUCT(encoder, (nn::embedding<Vocab, Embed>, embedding),
                           (nn::gru<EncSteps, Batch, Embed, Hidden>, rnn));
  encoder(Vocab v, Embed e, Hidden h, dt::index_t layers, double dropout = 0)
      : embedding(v, e), rnn(e, h, layers, dropout) {}
  template <class X, class... Args>
  auto operator()(X const& x, Args const&...) {
    return rnn(embedding(x));
  }
};

struct decoder : nn::module<decoder> {
  BOOST_HANA_DEFINE_STRUCT(decoder, (nn::additive_attention<DecSteps, EncSteps, Hidden, Hidden, AttnHidden>, attention),
                           (nn::embedding<Vocab, Embed>, embedding), (nn::gru<DecSteps, Batch, DecIn, Hidden>, rnn),
                           (nn::linear<Hidden, Vocab>, dense));
  std::vector<dt::tensor<float, Batch, DecSteps, EncSteps>> attention_weights;
  struct state {
    dt::tensor<float, Batch, EncSteps, Hidden> enc_outputs;
    dt::tensor<float, nn::Layers, Batch, Hidden> hidden;
    dt::tensor<std::int64_t, Batch> enc_valid_lens;
  };
  decoder(Vocab v, Embed e, Hidden h, dt::index_t layers, double dropout = 0)
      : attention(h, h, AttnHidden(h.value), dropout),
        embedding(v, e),
        rnn(DecIn(e.value + h.value), h, layers, dropout),
        dense(h, v) {}
  template <class EncOutputs>
  state init_state(EncOutputs const& enc_outputs, dt::tensor<std::int64_t, Batch> const& enc_valid_lens) {
    return {enc_outputs.first, enc_outputs.second, enc_valid_lens};
  }
  template <class X>
  auto operator()(X const& x, state s) {
    auto const embedded = embedding(x);
    std::vector<dt::tensor<float, Batch, DecSteps, Hidden>> outputs;
    attention_weights.clear();
    for (dt::index_t t = 0; t < embedded.template extent<DecSteps>(); ++t) {
      auto const query = dt::unsqueeze<DecSteps, 1>(dt::select<nn::Layers>(s.hidden, -1));
      auto const context = attention(query, s.enc_outputs, s.enc_outputs, s.enc_valid_lens);
      auto const token = dt::unsqueeze<DecSteps, 1>(dt::select<DecSteps>(embedded, t));
      auto [out, hidden] = rnn(dt::concat_as<DecIn, Hidden, Embed>(context, token), s.hidden);
      s.hidden = hidden;
      outputs.push_back(out);
      attention_weights.push_back(attention.attention_weights<Batch, DecSteps, EncSteps>());
    }
    return std::pair(dense(dt::concat<DecSteps>(outputs)), s);
  }
};
// --- the user's model, end ---
}  // namespace seq2seq_user_test

using namespace seq2seq_user_test;

TEST_CASE("seq2seq: the model as a user writes it matches the library's, key for key", "[nn][seq2seq]") {
  dt::generator gen(21);
  nn::encoder_decoder library(nn::seq2seq_encoder<Batch, EncSteps, Vocab, Embed, Hidden>(Vocab(10), Embed(8), Hidden(16), 2, 0, gen),
                              nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, Vocab, Embed, Hidden>(
                                  Vocab(10), Embed(8), Hidden(16), 2, 0, gen));
  nn::encoder_decoder user(encoder(Vocab(10), Embed(8), Hidden(16), 2), decoder(Vocab(10), Embed(8), Hidden(16), 2));
  library.eval();
  user.eval();
  test_support::temp_dir dir("seq2seq_user_");
  nn::save_parameters(library, dir.path() / "bahdanau.safetensors");
  nn::load_parameters(user, dir.path() / "bahdanau.safetensors");  // every key, every shape
  CHECK(nn::parameter_names(user) == nn::parameter_names(library));

  dt::tensor<std::int64_t, Batch, EncSteps> const X{{1, 2, 3, 4, 5, 6, 7}, {3, 3, 9, 0, 0, 0, 0}};
  dt::tensor<std::int64_t, Batch, DecSteps> const Y{{2, 4, 6, 8, 1}, {2, 5, 5, 0, 0}};
  dt::tensor<std::int64_t, Batch> const lens{7, 3};
  auto const [want, want_state] = library(X, Y, lens);
  auto const [got, got_state] = user(X, Y, lens);
  CHECK(dt::max_abs_diff(got, want) == 0.0);
  CHECK(dt::max_abs_diff(got_state.hidden, want_state.hidden) == 0.0);
  CHECK(dt::max_abs_diff(dt::concat<DecSteps>(user.decoder.attention_weights), library.decoder.attention_weights()) ==
        0.0);
}
