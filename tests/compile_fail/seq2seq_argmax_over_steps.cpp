// Greedy decoding's next token taken as the argmax over the steps instead
// of the vocabulary: the result is [Batch, Vocab], not tokens [Batch, DecSteps].
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: seq2seq_tokens_dims<dimtensor::call::seq2seq_attention_decoder, dimtensor::dims<Batch, DecSteps>, dimtensor::dims<Batch, Vocab> ?>
namespace dt = dimtensor;
namespace nn = dimtensor::nn;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);
using encoder_t = nn::seq2seq_encoder<Batch, EncSteps, Vocab, Embed, Hidden>;
using decoder_t = nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, Vocab, Embed, Hidden>;
int main() {
  decoder_t decoder(Vocab(10), Embed(8), Hidden(16), 2);
  nn::seq2seq_state<Batch, EncSteps, Hidden> state{dt::zeros<float>(Batch(1), EncSteps(7), Hidden(16)),
                                                  dt::zeros<float>(nn::Layers(2), Batch(1), Hidden(16)), std::nullopt};
  auto const logits = dt::zeros<float>(Batch(1), DecSteps(1), Vocab(10));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const next = dt::argmax<DecSteps>(logits);  // the mistake
#else
  auto const next = dt::argmax<Vocab>(logits);  // the fix
#endif
  auto const out = decoder(next, state);
  (void)out;
}
