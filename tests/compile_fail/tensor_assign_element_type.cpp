// A double tensor cannot hold a float expression without an explicit cast.
#include <dimtensor/dimtensor.hpp>
// EXPECT: element_types_differ<dimtensor::call::tensor, double, float ?>
// EXPECT: the operands have different element types
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main() {
  auto x = dt::ones<float>(Batch(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<double, Batch> y = x + 1.0f;
#else
  dt::tensor<double, Batch> y = dt::cast<double>(x + 1.0f);
#endif
  (void)y;
}
