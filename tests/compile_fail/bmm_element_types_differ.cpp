// bmm of a float tensor and a double tensor.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
// EXPECT: element_types_differ<dimtensor::call::bmm, float, double ?>
// EXPECT: the operands have different element types
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);
int main() {
  auto const a = dt::ones<float>(Batch(2), Queries(3), Hidden(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const b = dt::ones<double>(Batch(2), Hidden(4), ValueFeat(5));
#else
  auto const b = dt::ones<float>(Batch(2), Hidden(4), ValueFeat(5));
#endif
  auto const out = dt::bmm(a, b);
  (void)out;
}
