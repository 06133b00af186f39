// Element access that names one dim twice.
#include <dimtensor/dimtensor.hpp>
// EXPECT: duplicate_dimension<Batch, dimtensor::dims<Batch, Batch> ?>
// EXPECT: duplicate dimension in a shape
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
int main() {
  auto x = dt::ones<float>(Batch(2), Queries(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  float v = x(Batch(1), Batch(0));
#else
  float v = x(Batch(1), Queries(0));
#endif
  (void)v;
}
