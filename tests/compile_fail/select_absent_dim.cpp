// d2l's hidden_state[-1] taken along a dim the state does not have: the
// state's layers are Layers, not Heads.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/select.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::select, Heads, dimtensor::dims<Layers, Batch, Hidden> ?>
// EXPECT: the named dimension is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Layers);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const state = dt::ones<float>(Layers(2), Batch(4), Hidden(16));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const top = dt::select<Heads>(state, -1);  // the mistake
#else
  auto const top = dt::select<Layers>(state, -1);  // the fix
#endif
  (void)top;
}
