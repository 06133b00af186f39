// A dim named twice in one tensor type.
#include <dimtensor/dimtensor.hpp>
// EXPECT: duplicate_dimension<Queries, dimtensor::dims<Queries, Queries> ?>
// EXPECT: duplicate dimension in a shape. each dim may appear only once
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<float, Queries, Queries> t;
#else
  dt::tensor<float, Batch, Queries> t;
#endif
  (void)t;
}
