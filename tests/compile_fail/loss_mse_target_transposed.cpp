// nn.MSELoss compares its operands element by element; a target kept as
// [Steps, Batch] while the prediction is [Batch, Steps] is a mistake that
// PyTorch broadcasts or rejects only at run time.  Named, it does not compile.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/loss.hpp>
// EXPECT: loss_operands_differ<dimtensor::call::mse_loss, dimtensor::dims<Batch, Steps>, dimtensor::dims<Steps, Batch> ?>
// EXPECT: a loss compares a prediction and a target of the same dims in the same order
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);

int main() {
  auto const prediction = dt::ones<float>(Batch(2), Steps(3));
  auto const target = dt::zeros<float>(Steps(3), Batch(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const loss = dt::nn::mse_loss(prediction, target);  // the mistake
#else
  auto const loss = dt::nn::mse_loss(prediction, dt::transpose<Steps, Batch>(target));  // the fix
#endif
  (void)loss;
}
