// The masked cross-entropy of the decoder's logits taken over the source
// steps (the label's valid lengths are the target's).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
#include <dimtensor/nn/loss.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::masked_softmax_ce_loss, EncSteps, dimtensor::dims<Batch, DecSteps> ?>
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
  auto const logits = dt::zeros<float>(Batch(4), DecSteps(6), Vocab(10));
  auto const labels = dt::zeros<std::int64_t>(Batch(4), DecSteps(6));
  auto const lens = dt::full<std::int64_t>(6, Batch(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const l = nn::masked_softmax_ce_loss<EncSteps, Vocab>(logits, labels, lens);  // the mistake
#else
  auto const l = nn::masked_softmax_ce_loss<DecSteps, Vocab>(logits, labels, lens);  // the fix
#endif
  (void)l;
}
