// where(): the condition must broadcast with the values like any operand.
#include <dimtensor/dimtensor.hpp>
// EXPECT: operands_disagree<dimtensor::call::where, dimtensor::diagnostic::at_position<1>, dimtensor::diagnostic::left_has<Queries>, dimtensor::diagnostic::right_has<Hidden> ?>
// EXPECT: must be the same dimension at every position
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
int main() {
  auto x = dt::ones<float>(Batch(2), Hidden(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto mask = dt::ones<float>(Batch(2), Queries(3)) > 0.0f;
#else
  auto mask = dt::ones<float>(Batch(2), Hidden(3)) > 0.0f;
#endif
  auto y = dt::eval(dt::where(mask, x, 0.0f));
  (void)y;
}
