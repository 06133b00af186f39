// d2l's init_state permutes the encoder's time-major outputs to batch-first;
// here the outputs are permuted to time-major before building the state.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: assigned_dims_differ<dimtensor::call::tensor, dimtensor::dims<Batch, EncSteps, Hidden>, dimtensor::dims<EncSteps, Batch, Hidden> ?>
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
  auto const outputs = dt::ones<float>(Batch(4), EncSteps(7), Hidden(16));
  auto const hidden = dt::ones<float>(nn::Layers(2), Batch(4), Hidden(16));
#ifdef DIMTENSOR_COMPILE_FAIL
  nn::seq2seq_state<Batch, EncSteps, Hidden> state{dt::permute<EncSteps, Batch, Hidden>(outputs), hidden,  // the mistake
                                                  std::nullopt};
#else
  nn::seq2seq_state<Batch, EncSteps, Hidden> state{outputs, hidden, std::nullopt};  // the fix
#endif
  (void)state;
}
