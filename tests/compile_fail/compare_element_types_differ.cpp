// equal of a float and a double tensor: no silent conversion; cast one.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/compare.hpp>
// EXPECT: element_types_differ<dimtensor::call::equal, float, double ?>
// EXPECT: the operands have different element types
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main() {
  auto const x = dt::ones<float>(Batch(4));
  auto const golden = dt::ones<double>(Batch(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  bool const same = dt::equal(x, golden);
#else
  bool const same = dt::equal(x, dt::cast<float>(golden));
#endif
  return same ? 0 : 1;
}
