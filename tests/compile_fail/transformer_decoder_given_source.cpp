// The source tokens fed to the Transformer decoder.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/transformer.hpp>
// EXPECT: seq2seq_tokens_dims<dimtensor::call::transformer_decoder, dimtensor::dims<Batch, DecSteps>, dimtensor::dims<Batch, EncSteps> ?>
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
  encoder_t encoder(Vocab(10), Hidden(8), FFN(16), 2, 2);
  decoder_t decoder(Vocab(10), Hidden(8), FFN(16), 2, 2);
  auto const X = dt::zeros<std::int64_t>(Batch(4), EncSteps(7));
  auto const Y = dt::zeros<std::int64_t>(Batch(4), DecSteps(7));
  auto const state = decoder.init_state(encoder(X), std::nullopt);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = decoder(X, state);  // the mistake
#else
  auto const out = decoder(Y, state);  // the fix
#endif
  (void)out;
}
