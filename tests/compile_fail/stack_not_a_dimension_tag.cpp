// stack<New> with a type that is not a dimension tag (a plain int).
#include <vector>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/stack.hpp>
// EXPECT: not_a_dimension_tag<dimtensor::call::stack, int ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(EncSteps);
int main() {
  std::vector<dt::tensor<float, Batch, EncSteps>> weights(2, dt::ones<float>(Batch(2), EncSteps(3)));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const all = dt::stack<int>(weights);  // the mistake
#else
  auto const all = dt::stack<DecSteps>(weights);  // the fix
#endif
  (void)all;
}
