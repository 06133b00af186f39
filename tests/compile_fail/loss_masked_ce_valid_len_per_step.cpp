// d2l's MaskedSoftmaxCELoss takes one valid length per sequence
// (valid_len [Batch]); lengths typed per step ([Steps]) do not lead the
// label's dims without Steps.
#include <cstdint>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/loss.hpp>
// EXPECT: valid_lens_not_a_leading_part<dimtensor::call::masked_softmax_ce_loss, dimtensor::dims<Steps>, dimtensor::dims<Batch> ?>
// EXPECT: valid_lens' dims must be a leading part
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);

int main() {
  auto const pred = dt::ones<float>(Batch(3), Steps(4), Vocab(10));
  auto const label = dt::ones<std::int64_t>(Batch(3), Steps(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const valid_len = dt::tensor<std::int64_t, Steps>{4, 2, 0, 1};  // the mistake
#else
  auto const valid_len = dt::tensor<std::int64_t, Batch>{4, 2, 0};  // the fix
#endif
  auto const loss = dt::nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, valid_len);
  (void)loss;
}
