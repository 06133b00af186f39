// Per-step outputs that already carry the step dim (each [Steps=1, Batch,
// Vocab]) stacked along Steps again: stacking adds a dim, concat joins one.
#include <vector>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/stack.hpp>
// EXPECT: already_a_dimension_of<dimtensor::call::stack, Steps, dimtensor::dims<Steps, Batch, Vocab> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Vocab);
int main() {
  std::vector<dt::tensor<float, Steps, Batch, Vocab>> outputs(3, dt::ones<float>(Steps(1), Batch(2), Vocab(5)));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const all = dt::stack<Steps>(outputs);  // the mistake
#else
  auto const all = dt::concat<Steps>(outputs);  // the fix
#endif
  (void)all;
}
