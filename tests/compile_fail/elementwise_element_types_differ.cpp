// float + double: no silent promotion.
#include <dimtensor/dimtensor.hpp>
// EXPECT: element_types_differ<dimtensor::call::plus, float, double ?>
// EXPECT: the operands have different element types. convert one explicitly
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main() {
  auto a = dt::ones<float>(Batch(3));
  auto b = dt::ones<double>(Batch(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto c = dt::eval(a + b);
#else
  auto c = dt::eval(a + dt::cast<float>(b));
#endif
  (void)c;
}
