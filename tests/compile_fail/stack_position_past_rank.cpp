// stack<New, Pos> with Pos past the operands' rank (2): positions go from 0
// to the rank.
#include <vector>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/stack.hpp>
// EXPECT: position_past_rank<dimtensor::call::stack, dimtensor::diagnostic::at_position<3>, dimtensor::diagnostic::tensor_rank<2>
namespace dt = dimtensor;
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
int main() {
  std::vector<dt::tensor<float, Batch, EncSteps>> weights(4, dt::ones<float>(Batch(2), EncSteps(7)));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const all = dt::stack<DecSteps, 3>(weights);  // the mistake
#else
  auto const all = dt::stack<DecSteps, 1>(weights);  // the fix
#endif
  (void)all;
}
