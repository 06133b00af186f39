// bmm of the queries with the values, the keys forgotten: they share no
// dim to sum over, so no transpose of one operand and no swap makes the
// dims fit, and the diagnosis says so instead of suggesting a transpose.
#include <dimtensor/dimtensor.hpp>
// EXPECT: bmm_inner_dims_disagree<dimtensor::diagnostic::left_contracts<Hidden>, dimtensor::diagnostic::right_offers<KVPairs>, dimtensor::diagnostic::no_fix_found ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(3), Hidden(8));
  auto const keys = dt::randn<float>(Batch(2), KVPairs(10), Hidden(8));
  auto const values = dt::randn<float>(Batch(2), KVPairs(10), ValueFeat(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = dt::bmm(queries, values);  // the mistake: the scores need the keys first
#else
  auto const out = dt::bmm(dt::softmax<KVPairs>(dt::bmm(queries, dt::transpose<KVPairs, Hidden>(keys))), values);
#endif
  (void)keys;
  (void)out;
}
