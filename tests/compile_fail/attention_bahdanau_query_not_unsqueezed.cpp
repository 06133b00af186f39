// Bahdanau attention's decoder step (d2l's Seq2SeqAttentionDecoder): the
// query is the last layer's hidden state with a query dim of one step,
// torch.unsqueeze(hidden_state[-1], dim=1).  Without the unsqueeze the
// query [Batch, Hidden] lacks Queries.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::additive_attention, dimtensor::operand::queries, Queries, dimtensor::dims<Batch, Hidden> ?>
// EXPECT: an attention operand lacks a dim that the module names
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(AttnHidden);

int main() {
  auto const enc_outputs = dt::randn<float>(Batch(4), Steps(7), Hidden(16));
  auto const hidden_state = dt::randn<float>(Batch(4), Hidden(16));  // the last layer's state
  auto const enc_valid_lens = dt::tensor<int, Batch>{7, 5, 3, 7};
  dt::nn::additive_attention<Queries, Steps, Hidden, Hidden, AttnHidden> attention(Hidden(16), Hidden(16),
                                                                                   AttnHidden(16), 0.0);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const query = hidden_state;  // the mistake
#else
  auto const query = dt::unsqueeze<Queries, 1>(hidden_state);  // the fix
#endif
  auto const context = attention(query, enc_outputs, enc_outputs, enc_valid_lens);
  (void)context;
}
