// A decoder block's self-attention given the encoder's lengths (d2l's
// `self.attention1(X, key_values, key_values, enc_valid_lens)`): silent in
// PyTorch whenever the target is no longer than the source. The encoder's
// lengths measure EncSteps; the self-attention attends over the decoder's
// own steps (DecKeys), so it is a compile error naming both.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: valid_lens_measure_another_dim<dimtensor::call::dot_product_attention, dimtensor::diagnostic::measured<EncSteps>, dimtensor::diagnostic::masked<DecKeys> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(DecKeys);
DIMTENSOR_DIM(Hidden);

int main() {
  dt::nn::dot_product_attention<DecSteps, DecKeys, Hidden> self_attention;
  auto const Y = dt::randn<float>(Batch(2), DecSteps(3), Hidden(4));
  auto const keys = dt::rename<DecSteps, DecKeys>(Y);
  dt::lengths<EncSteps, Batch> const enc_valid_lens{4, 2};
  // d2l's dec_valid_lens: query t sees the steps 0..t of the decoder.
  dt::lengths<DecKeys, Batch, DecSteps> const dec_valid_lens{{1, 2, 3}, {1, 2, 3}};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = self_attention(Y, keys, keys, enc_valid_lens);  // the mistake
#else
  auto const out = self_attention(Y, keys, keys, dec_valid_lens);  // the fix
#endif
  (void)enc_valid_lens;
  (void)dec_valid_lens;
  (void)out;
}
