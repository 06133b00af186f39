// Element access that names only some of the dims.
#include <dimtensor/dimtensor.hpp>
// EXPECT: missing_index<dimtensor::call::element_access, Batch, dimtensor::dims<Batch, Queries> ?>
// EXPECT: element access needs one named index per dim of the tensor, and this dim has none
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
int main() {
  auto x = dt::ones<float>(Batch(2), Queries(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  float v = x(Queries(1));
#else
  float v = x(Queries(1), Batch(0));
#endif
  (void)v;
}
