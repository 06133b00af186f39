// bmm of the queries and the transposed keys, with the queries transposed
// too ([Batch, Hidden, Queries]): the fix bmm names is computed from the
// operands, here transposing the left operand back (a fixed hint would
// have said to transpose the keys, which would not type-check).
#include <dimtensor/dimtensor.hpp>
// EXPECT: bmm_inner_dims_disagree<dimtensor::diagnostic::left_contracts<Queries>, dimtensor::diagnostic::right_offers<Hidden>, dimtensor::diagnostic::fix_transpose_left<Hidden, Queries> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(3), Hidden(8));
  auto const keys = dt::randn<float>(Batch(2), KVPairs(10), Hidden(8));
  auto const keys_t = dt::transpose<KVPairs, Hidden>(keys);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const scores = dt::bmm(dt::transpose<Queries, Hidden>(queries), keys_t);  // the mistake
#else
  auto const scores = dt::bmm(queries, keys_t);  // the fix
#endif
  (void)scores;
}
