// enc_valid_lens given per source step ([Batch, EncSteps], a mask) instead of
// one length per sequence ([Batch]).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: seq2seq_valid_lens_dims<dimtensor::call::seq2seq_attention_decoder, Batch, dimtensor::dims<Batch, EncSteps> ?>
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
  encoder_t encoder(Vocab(10), Embed(8), Hidden(16), 2);
  decoder_t decoder(Vocab(10), Embed(8), Hidden(16), 2);
  auto const X = dt::zeros<std::int64_t>(Batch(4), EncSteps(7));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const lens = dt::ones<std::int64_t>(Batch(4), EncSteps(7));  // the mistake
#else
  auto const lens = dt::full<std::int64_t>(7, Batch(4));  // the fix
#endif
  auto const state = decoder.init_state(encoder(X, lens), lens);
  (void)state;
}
