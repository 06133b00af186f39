// Scores written without transposing the keys, then used through the
// tensor's members (extent, item, backward) as d2l code does with
// `.shape`, `.item()` and `.backward()`: the bmm diagnosis must be the
// first error (the harness checks the first error of every file), and the
// member calls on the rejected result must add none.
#include <dimtensor/dimtensor.hpp>
// EXPECT: bmm_inner_dims_disagree<dimtensor::diagnostic::left_contracts<Hidden>, dimtensor::diagnostic::right_offers<KVPairs>, dimtensor::diagnostic::fix_transpose_right<KVPairs, Hidden> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

int main() {
  auto queries = dt::randn<float>(Batch(2), Queries(1), Hidden(8));
  auto const keys = dt::randn<float>(Batch(2), KVPairs(10), Hidden(8));
  queries.requires_grad_();
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const scores = dt::bmm(queries, keys);  // the mistake
#else
  auto const scores = dt::bmm(queries, dt::transpose<KVPairs, Hidden>(keys));  // the fix
#endif
  auto const n = scores.extent<KVPairs>();
  auto const total = dt::sum(scores);
  auto const value = total.item();
  total.backward();
  (void)n;
  (void)value;
}
