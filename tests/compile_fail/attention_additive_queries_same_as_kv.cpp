// additive_attention<Queries, Queries, ...>: self-attention spelled by
// giving the module the same dim for the queries' and the keys' sequences.
// The scores would need that dim twice; the module refuses.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: additive_attention needs Queries and KV to differ
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Feat);

int main() {
  auto const X = dt::randn<float>(Batch(2), Queries(4), Feat(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::nn::additive_attention<Queries, Queries, Feat, Feat, Hidden> attention(Feat(8), Feat(8), Hidden(8));  // the mistake
  auto const out = attention(X, X, X);
#else
  dt::nn::additive_attention<Queries, KVPairs, Feat, Feat, Hidden> attention(Feat(8), Feat(8), Hidden(8));  // the fix
  auto const kv = dt::rename<Queries, KVPairs>(X);
  auto const out = attention(X, kv, kv);
#endif
  (void)out;
}
