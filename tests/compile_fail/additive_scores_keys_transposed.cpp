// additive_attention_scores given keys laid out [Batch, Hidden, KVPairs] (as
// bmm wants them for dot products) instead of [Batch, KVPairs, Hidden]: the
// scores add each query to each key along Hidden, so both end with Hidden.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/additive_scores.hpp>
// EXPECT: additive_scores_operands<dimtensor::call::additive_attention_scores, dimtensor::dims<Batch, Queries, Hidden>, dimtensor::dims<Batch, Hidden, KVPairs> ?>
// EXPECT: additive attention's scores need queries \[batch..., Queries, Hidden\] and keys \[batch..., KV, Hidden\]
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Score);

int main() {
  auto const q = dt::ones<float>(Batch(2), Queries(3), Hidden(4));
  auto const k = dt::ones<float>(Batch(2), KVPairs(5), Hidden(4));
  auto const w = dt::ones<float>(Score(1), Hidden(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const scores = dt::additive_attention_scores<Queries, KVPairs, Hidden>(q, dt::transpose<KVPairs, Hidden>(k), w);  // the mistake
#else
  auto const scores = dt::additive_attention_scores<Queries, KVPairs, Hidden>(q, k, w);  // the fix
#endif
  (void)scores;
}
