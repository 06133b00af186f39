// The softmax over the wrong axis: masked_softmax<Queries> on the scores
// [Batch, Queries, KVPairs].  With d2l's 2-D valid_lens [Batch, Queries]
// (one length per query, counted along KVPairs), the lengths no longer
// index the rows of that softmax: valid_lens must be a leading part of the
// scores' dims without the softmax's dim, here [Batch, KVPairs].
// (With 1-D valid_lens [Batch] the same mistake type-checks: a softmax over
// Queries is a legitimate operation, and its result has the same dims.)
#include <cmath>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: valid_lens_not_a_leading_part<dimtensor::call::masked_softmax, dimtensor::dims<Batch, Queries>, dimtensor::dims<Batch, KVPairs> ?>
// EXPECT: valid_lens' dims must be a leading part \(a prefix, in order\) of the scores' dims without the masked dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(3), Hidden(2));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch, Queries>{{2, 3, 4}, {6, 7, 8}};
  auto const scores = dt::bmm(queries, dt::transpose<KVPairs, Hidden>(keys)) / std::sqrt(2.0f);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const weights = dt::masked_softmax<Queries>(scores, valid_lens);  // the mistake
#else
  auto const weights = dt::masked_softmax<KVPairs>(scores, valid_lens);  // the fix
#endif
  auto const out = dt::bmm(weights, values);
  (void)out;
}
