// contract<Hidden> where the right operand has no Hidden dim.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/contract.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::contract, Hidden, dimtensor::dims<Out, In> ?>
// EXPECT: is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);
int main() {
  auto const x = dt::ones<float>(Batch(2), Hidden(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const w = dt::ones<float>(Out(3), In(4));
#else
  auto const w = dt::ones<float>(Out(3), Hidden(4));
#endif
  auto const y = dt::contract<Hidden>(x, w);
  (void)y;
}
