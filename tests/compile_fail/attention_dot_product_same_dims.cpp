// dot_product_attention<Queries, Queries, Hidden>: self-attention spelled by
// naming one sequence dim for both the queries and the keys.  The scores
// [Batch, Queries, KV] would need that dim twice; the module refuses.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: dot_product_attention<Queries, KV, Feat> needs three different dims
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

int main() {
  auto const X = dt::randn<float>(Batch(2), Queries(4), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::nn::dot_product_attention<Queries, Queries, Hidden> attention;  // the mistake
  auto const out = attention(X, X, X);
#else
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention;  // the fix
  auto const kv = dt::rename<Queries, KVPairs>(X);
  auto const out = attention(X, kv, kv);
#endif
  (void)out;
}
