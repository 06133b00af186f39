// The query taken as the whole GRU state (every layer) instead of the top
// layer's, unsqueezed: d2l's torch.unsqueeze(hidden_state[-1], dim=1).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::additive_attention, dimtensor::operand::queries, DecSteps
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
  auto const hidden = dt::ones<float>(nn::Layers(2), Batch(4), Hidden(16));
  auto const enc_outputs = dt::ones<float>(Batch(4), EncSteps(7), Hidden(16));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const context = attention(hidden, enc_outputs, enc_outputs);  // the mistake
#else
  auto const query = dt::unsqueeze<DecSteps, 1>(dt::select<nn::Layers>(hidden, -1));
  auto const context = attention(query, enc_outputs, enc_outputs);  // the fix
#endif
  (void)context;
}
