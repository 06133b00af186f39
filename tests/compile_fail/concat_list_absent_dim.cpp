// d2l's torch.cat(outputs, dim=0) written along a dim the step outputs do
// not have (the features, not the steps).
#include <vector>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::concat, Hidden, dimtensor::dims<Steps, Batch, Vocab> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
int main() {
  std::vector<dt::tensor<float, Steps, Batch, Vocab>> outputs(3, dt::ones<float>(Steps(1), Batch(2), Vocab(5)));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const all = dt::concat<Hidden>(outputs);  // the mistake
#else
  auto const all = dt::concat<Steps>(outputs);  // the fix
#endif
  (void)all;
}
