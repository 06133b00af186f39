// bmm given a rank-2 operand (d2l's weights before unsqueeze(1)).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
// EXPECT: bmm_needs_rank_3<dimtensor::diagnostic::left_has<dimtensor::dims<Batch, KVPairs> ?>, dimtensor::diagnostic::right_has<dimtensor::dims<Batch, KVPairs, ValueFeat> ?> ?>
// EXPECT: bmm needs two rank-3 operands
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(ValueFeat);
int main() {
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(1));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const weights = dt::full<float>(0.1f, Batch(2), KVPairs(10));
#else
  auto const weights = dt::full<float>(0.1f, Batch(2), Queries(1), KVPairs(10));
#endif
  auto const out = dt::bmm(weights, values);
  (void)out;
}
