// bmm whose contracted dim has two different static extents.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
// EXPECT: extent_mismatch<dimtensor::call::bmm, Hidden, dimtensor::diagnostic::extents<8, 16> ?>
// EXPECT: static extents disagree for a dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);
int main() {
  auto const a = dt::ones<float>(Batch(2), Queries(3), Hidden::fixed<8>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const b = dt::ones<float>(Batch(2), Hidden::fixed<16>{}, ValueFeat(5));
#else
  auto const b = dt::ones<float>(Batch(2), Hidden::fixed<8>{}, ValueFeat(5));
#endif
  auto const out = dt::bmm(a, b);
  (void)out;
}
