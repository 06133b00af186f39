// Element access with a dim the tensor does not have.
#include <dimtensor/dimtensor.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::element_access, Hidden, dimtensor::dims<Batch, Queries> ?>
// EXPECT: the named dimension is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
int main() {
  auto x = dt::ones<float>(Batch(2), Queries(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  float v = x(Batch(1), Hidden(0));
#else
  float v = x(Batch(1), Queries(0));
#endif
  (void)v;
}
