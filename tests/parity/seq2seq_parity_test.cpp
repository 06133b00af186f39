// Parity of the Bahdanau seq2seq model with d2l's own code
// (tests/parity/goldens_seq2seq.py, torch 1.13): Seq2SeqEncoder +
// Seq2SeqAttentionDecoder in an EncoderDecoder, eval mode, d2l's weights
// loaded (from the folder of <key>.npy and from weights.safetensors).  With
// and without the sources' valid lengths: the logits, the final state, the
// per-step attention weights and the gradient of every parameter agree
// within 1e-5.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>

#include <catch2/catch.hpp>

#include "parity/support.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace seq2seq_parity {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);

using parity_support::check_close;
using parity_support::data_dir;
using parity_support::load;
using parity_support::load_both_ways;

using encoder_t = nn::seq2seq_encoder<Batch, EncSteps, Vocab, Embed, Hidden>;
using decoder_t = nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, Vocab, Embed, Hidden>;

}  // namespace seq2seq_parity

using namespace seq2seq_parity;

TEST_CASE("seq2seq with Bahdanau attention matches d2l: logits, state, attention weights, gradients",
          "[parity][seq2seq]") {
  auto const dir = data_dir("attention", "seq2seq_bahdanau");
  nn::encoder_decoder net(encoder_t(Vocab(10), Embed(8), Hidden(16), 2), decoder_t(Vocab(10), Embed(8), Hidden(16), 2));
  net.eval();
  load_both_ways(net, dir);
  auto const X = load<dt::tensor<std::int64_t, Batch, EncSteps>>(dir, "X");
  auto const Y = load<dt::tensor<std::int64_t, Batch, DecSteps>>(dir, "Y");
  auto const valid_lens = load<dt::tensor<std::int64_t, Batch>>(dir, "valid_lens");
  using out_t = dt::tensor<float, Batch, DecSteps, Vocab>;
  using state_t = dt::tensor<float, nn::Layers, Batch, Hidden>;
  auto const G_output = load<out_t>(dir, "G_output");
  auto const G_state = load<state_t>(dir, "G_state");
  for (std::string const suffix : {"lens", "none"}) {
    INFO("enc_valid_lens: " << suffix);
    nn::zero_grad(net);
    auto const lens = suffix == "lens" ? std::optional(valid_lens) : std::nullopt;
    auto const [output, state] = net(X, Y, lens);
    check_close("logits", output, load<out_t>(dir, "output_" + suffix));
    check_close("final state", state.hidden, load<state_t>(dir, "state_" + suffix));
    check_close("attention weights", net.decoder.attention_weights(),
                load<dt::tensor<float, Batch, DecSteps, EncSteps>>(dir, "attention_weights_" + suffix));
    dt::eval(dt::sum(output * G_output) + dt::sum(state.hidden * G_state)).backward();
    int grads = 0;
    net.for_each_parameter([&](std::string const& key, auto const& parameter) {
      using tensor_type = std::remove_cvref_t<decltype(parameter)>;
      check_close("grad of " + key, parameter.grad(), load<tensor_type>(dir, "grad_" + key + "_" + suffix));
      ++grads;
    });
    CHECK(grads == 23);
  }
}
