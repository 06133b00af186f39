// int - float: the call named is operator-.
#include <dimtensor/dimtensor.hpp>
// EXPECT: element_types_differ<dimtensor::call::minus, int, float ?>
// EXPECT: the operands have different element types
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
int main() {
  auto a = dt::ones<std::int32_t>(Batch(3), Hidden(2));
  auto b = dt::ones<float>(Hidden(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto c = dt::eval(a - b);
#else
  auto c = dt::eval(dt::cast<float>(a) - b);
#endif
  (void)c;
}
