// The sources' valid lengths given to the decoder per source step (a mask)
// instead of one per sequence.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/transformer.hpp>
// EXPECT: transformer_valid_lens_dims<dimtensor::call::transformer_decoder, Batch, dimtensor::dims<Batch, EncSteps> ?>
namespace dt = dimtensor;
namespace nn = dimtensor::nn;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);
using encoder_t = nn::transformer_encoder<Batch, EncSteps, Vocab, Hidden, FFN>;
using decoder_t = nn::transformer_decoder<Batch, DecSteps, EncSteps, Vocab, Hidden, FFN>;
int main() {
  decoder_t decoder(Vocab(10), Hidden(8), FFN(16), 2, 2);
  auto const enc_outputs = dt::zeros<float>(Batch(4), EncSteps(7), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const lens = dt::ones<std::int64_t>(Batch(4), EncSteps(7));  // the mistake
#else
  auto const lens = dt::full<std::int64_t>(7, Batch(4));  // the fix
#endif
  auto const state = decoder.init_state(enc_outputs, lens);
  (void)state;
}
