// bmm of operands whose first (batch) dims differ.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
#include <dimtensor/ops/transpose.hpp>
// EXPECT: bmm_batch_dims_disagree<dimtensor::diagnostic::left_has<Batch>, dimtensor::diagnostic::right_has<Heads> ?>
// EXPECT: bmm needs the same batch dim .the first. in both operands
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);
int main() {
  auto const weights = dt::ones<float>(Batch(2), Queries(3), Hidden(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const values = dt::ones<float>(Heads(2), Hidden(4), ValueFeat(5));
#else
  auto const values = dt::ones<float>(Batch(2), Hidden(4), ValueFeat(5));
#endif
  auto const out = dt::bmm(weights, values);
  (void)out;
}
