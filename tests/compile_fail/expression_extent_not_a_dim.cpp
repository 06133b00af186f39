// extent<D>() of a lazy expression for a dim it does not have.
#include <dimtensor/dimtensor.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::tensor, Queries, dimtensor::dims<Batch, Hidden> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const a = dt::ones<float>(Batch(2), Hidden(4));
  auto const e = a * 2.f + a;
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const n = e.extent<Queries>();  // the mistake
#else
  auto const n = e.extent<Hidden>();  // the fix
#endif
  (void)n;
}
