// The reverse: a decoder block's attention over the encoder's outputs given
// the decoder's causal lengths. They measure the decoder's own steps
// (DecKeys); the module attends over EncSteps: a compile error naming both.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: valid_lens_measure_another_dim<dimtensor::call::multi_head_attention, dimtensor::diagnostic::measured<DecKeys>, dimtensor::diagnostic::masked<EncSteps> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(DecKeys);
DIMTENSOR_DIM(Hidden);

int main() {
  dt::nn::multi_head_attention<DecSteps, EncSteps, Hidden> cross_attention(Hidden(4), Hidden(4), Hidden(4), Hidden(4),
                                                                           2);
  auto const Y = dt::randn<float>(Batch(2), DecSteps(3), Hidden(4));
  auto const enc_outputs = dt::randn<float>(Batch(2), EncSteps(5), Hidden(4));
  dt::lengths<EncSteps, Batch> const enc_valid_lens{4, 2};
  dt::lengths<DecKeys, Batch, DecSteps> const dec_valid_lens{{1, 2, 3}, {1, 2, 3}};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = cross_attention(Y, enc_outputs, enc_outputs, dec_valid_lens);  // the mistake
#else
  auto const out = cross_attention(Y, enc_outputs, enc_outputs, enc_valid_lens);  // the fix
#endif
  (void)enc_valid_lens;
  (void)dec_valid_lens;
  (void)out;
}
