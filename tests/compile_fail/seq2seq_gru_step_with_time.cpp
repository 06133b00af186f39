// gru::step given a whole sequence ([Steps, Batch, In]) instead of one step's
// input ([Batch, In]).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: gru_step_input_dims<DecSteps, Batch, Embed, dimtensor::dims<DecSteps, Batch, Embed> ?>
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
  nn::gru<DecSteps, Batch, Embed, Hidden> rnn(Embed(8), Hidden(16), 2);
  auto const state = rnn.zero_state(Batch(4));
  auto const sequence = dt::ones<float>(DecSteps(5), Batch(4), Embed(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const next = rnn.step(sequence, state);  // the mistake
#else
  auto const next = rnn.step(dt::select<DecSteps>(sequence, 0), state);  // the fix
#endif
  (void)next;
}
