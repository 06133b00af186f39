// d2l's MaskedSoftmaxCELoss given the sources' lengths (X_valid_len) instead
// of the targets' (Y_valid_len): the data pipeline's lengths measure their
// own steps, so it is a compile error naming both.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/loss.hpp>
// EXPECT: valid_lens_measure_another_dim<dimtensor::call::masked_softmax_ce_loss, dimtensor::diagnostic::measured<EncSteps>, dimtensor::diagnostic::masked<DecSteps> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);

int main() {
  auto const Y_hat = dt::randn<float>(Batch(2), DecSteps(3), Vocab(5));
  dt::tensor<std::int64_t, Batch, DecSteps> const Y{{1, 2, 3}, {4, 0, 0}};
  dt::lengths<EncSteps, Batch> const X_valid_len{4, 2};
  dt::lengths<DecSteps, Batch> const Y_valid_len{3, 1};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const l = dt::nn::masked_softmax_ce_loss<DecSteps, Vocab>(Y_hat, Y, X_valid_len);  // the mistake
#else
  auto const l = dt::nn::masked_softmax_ce_loss<DecSteps, Vocab>(Y_hat, Y, Y_valid_len);  // the fix
#endif
  (void)X_valid_len;
  (void)Y_valid_len;
  (void)l;
}
