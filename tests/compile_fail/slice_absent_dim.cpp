// slice along a dim the tensor does not have.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/slice.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::slice, Steps, dimtensor::dims<Batch, Embed> ?>
// EXPECT: the named dimension is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Embed);
int main() {
  auto const x = dt::ones<float>(Batch(2), Embed(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::slice<Steps>(x, 0, 1);
#else
  auto const y = dt::slice<Embed>(x, 0, 1);
#endif
  (void)y;
}
