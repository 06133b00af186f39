// Bahdanau attention written by hand over the decoder's own outputs instead
// of the encoder's: the keys lack the source steps.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::additive_attention, dimtensor::operand::keys, EncSteps
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
  nn::additive_attention<DecSteps, EncSteps, Hidden, Hidden, nn::AttentionHidden> attention(
      Hidden(16), Hidden(16), nn::AttentionHidden(16));
  auto const query = dt::ones<float>(Batch(4), DecSteps(1), Hidden(16));
  auto const enc_outputs = dt::ones<float>(Batch(4), EncSteps(7), Hidden(16));
  auto const dec_outputs = dt::ones<float>(Batch(4), DecSteps(5), Hidden(16));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const context = attention(query, dec_outputs, dec_outputs);  // the mistake
#else
  auto const context = attention(query, enc_outputs, enc_outputs);  // the fix
  (void)dec_outputs;
#endif
  (void)context;
}
