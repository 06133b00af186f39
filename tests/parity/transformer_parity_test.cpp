// Parity of the Transformer with d2l's own code
// (tests/parity/goldens_transformer.py, torch 1.13): TransformerEncoder +
// TransformerDecoder in an EncoderDecoder, num_hiddens 8, 2 heads, FFN 16,
// 2 layers, dropout 0, d2l's weights loaded (from the folder of <key>.npy
// and from weights.safetensors).  In training mode (the decoder's causal
// valid lengths) and in eval mode: the logits and every block's attention
// weights (encoder self-attention, decoder self-attention and attention over
// the encoder), and in training mode the gradient of every parameter, agree
// within 1e-5.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
#include <dimtensor/nn/transformer.hpp>

#include <catch2/catch.hpp>

#include "parity/support.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace transformer_parity {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(SrcVocab);
DIMTENSOR_DIM(TgtVocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);

using parity_support::check_close;
using parity_support::data_dir;
using parity_support::load;
using parity_support::load_both_ways;

using encoder_t = nn::transformer_encoder<Batch, EncSteps, SrcVocab, Hidden, FFN>;
using decoder_t = nn::transformer_decoder<Batch, DecSteps, EncSteps, TgtVocab, Hidden, FFN>;

/// d2l's weights (batch * heads, queries, keys) are saved as (batch, heads,
/// queries, keys); dimtensor's are [Batch, Queries, Heads, Keys].
template <class Q, class K, class W>
auto per_head(W const& w) {
  return dt::permute<Batch, nn::Heads, Q, K>(w);
}

}  // namespace transformer_parity

using namespace transformer_parity;

TEST_CASE("the Transformer matches d2l: logits, attention weights per block, gradients", "[parity][transformer]") {
  auto const dir = data_dir("attention", "transformer");
  nn::encoder_decoder net(encoder_t(SrcVocab(11), Hidden(8), FFN(16), 2, 2, 0.0, false, dt::default_generator()),
                          decoder_t(TgtVocab(12), Hidden(8), FFN(16), 2, 2, 0.0, dt::default_generator()));
  load_both_ways(net, dir);
  auto const X = load<dt::tensor<std::int64_t, Batch, EncSteps>>(dir, "X");
  auto const Y = load<dt::tensor<std::int64_t, Batch, DecSteps>>(dir, "Y");
  auto const valid_lens = load<dt::tensor<std::int64_t, Batch>>(dir, "valid_lens");
  using out_t = dt::tensor<float, Batch, DecSteps, TgtVocab>;
  using enc_w = dt::tensor<float, Batch, nn::Heads, EncSteps, nn::SelfKeys>;
  using self_w = dt::tensor<float, Batch, nn::Heads, DecSteps, nn::SelfKeys>;
  using cross_w = dt::tensor<float, Batch, nn::Heads, DecSteps, EncSteps>;
  for (std::string const mode : {"train", "eval"}) {
    INFO("mode: " << mode);
    net.train(mode == "train");
    nn::zero_grad(net);
    auto const [output, state] = net(X, Y, valid_lens);
    CHECK(state.steps_so_far == 4);
    check_close("logits", output, load<out_t>(dir, "output_" + mode));
    for (std::size_t i = 0; i < 2; ++i) {
      std::string const at = std::to_string(i) + "_" + mode;
      check_close("encoder block " + std::to_string(i) + " self-attention",
                  per_head<EncSteps, nn::SelfKeys>(net.encoder.attention_weights(i)),
                  load<enc_w>(dir, "enc_attention_" + at));
      check_close("decoder block " + std::to_string(i) + " self-attention",
                  per_head<DecSteps, nn::SelfKeys>(net.decoder.attention_weights().self.at(i)),
                  load<self_w>(dir, "dec_self_attention_" + at));
      check_close("decoder block " + std::to_string(i) + " attention over the encoder",
                  per_head<DecSteps, EncSteps>(net.decoder.attention_weights().cross.at(i)),
                  load<cross_w>(dir, "dec_cross_attention_" + at));
    }
    if (mode == "train") {
      dt::eval(dt::sum(output * load<out_t>(dir, "G_output"))).backward();
      int grads = 0;
      net.for_each_parameter([&](std::string const& key, auto const& parameter) {
        using tensor_type = std::remove_cvref_t<decltype(parameter)>;
        check_close("grad of " + key, parameter.grad(), load<tensor_type>(dir, "grad_" + key));
        ++grads;
      });
      CHECK(grads == 64);
    }
  }
}
