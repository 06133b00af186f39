// d2l's masked_softmax works on the last axis; named, the softmax of the
// scores must run over KVPairs.  Naming the feature dim instead (Hidden,
// which the bmm summed away) is not a dimension of the scores.
#include <cmath>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::masked_softmax, Hidden, dimtensor::dims<Batch, Queries, KVPairs> ?>
// EXPECT: the named dimension is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), Hidden(2));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  auto const scores = dt::bmm(queries, dt::transpose<KVPairs, Hidden>(keys)) / std::sqrt(2.0f);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const weights = dt::masked_softmax<Hidden>(scores, valid_lens);  // the mistake
#else
  auto const weights = dt::masked_softmax<KVPairs>(scores, valid_lens);  // the fix
#endif
  auto const out = dt::bmm(weights, values);
  (void)out;
}
