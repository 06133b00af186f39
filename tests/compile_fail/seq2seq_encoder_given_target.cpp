// The target tokens fed to the encoder.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: seq2seq_tokens_dims<dimtensor::call::seq2seq_encoder, dimtensor::dims<Batch, EncSteps>, dimtensor::dims<Batch, DecSteps> ?>
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
  auto const X = dt::zeros<std::int64_t>(Batch(4), EncSteps(7));
  auto const Y = dt::zeros<std::int64_t>(Batch(4), DecSteps(7));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = encoder(Y);  // the mistake
#else
  auto const out = encoder(X);  // the fix
#endif
  (void)out;
}
