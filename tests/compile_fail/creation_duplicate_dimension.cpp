// A factory given one dim twice.
#include <dimtensor/dimtensor.hpp>
// EXPECT: duplicate_dimension<Batch, dimtensor::dims<Batch, Batch> ?>
// EXPECT: duplicate dimension in a shape
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  auto t = dt::zeros<float>(Batch(2), Batch(3));
#else
  auto t = dt::zeros<float>(Batch(2), Hidden(3));
#endif
  (void)t;
}
