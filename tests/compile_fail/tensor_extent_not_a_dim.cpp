// Asking a tensor for the extent of a dim it does not have.
#include <dimtensor/dimtensor.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::tensor, Hidden, dimtensor::dims<Batch, Queries> ?>
// EXPECT: the named dimension is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
int main() {
  auto x = dt::ones<float>(Batch(2), Queries(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto n = x.extent<Hidden>();
#else
  auto n = x.extent<Queries>();
#endif
  (void)n;
}
