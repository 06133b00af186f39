// The additive attention module called with queries and keys swapped:
// attention(keys, queries, values, valid_lens).  The module names the dims
// each operand must have, so the first operand (taken as the queries) lacks
// Queries, and the diagnostic says which operand and shows its dims.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::additive_attention, dimtensor::operand::queries, Queries, dimtensor::dims<Batch, KVPairs, KeyFeat> ?>
// EXPECT: an attention operand lacks a dim that the module names
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), QueryFeat(20));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden> attention(KeyFeat(2), QueryFeat(20),
                                                                                     Hidden(8), 0.1);
  attention.eval();
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = attention(keys, queries, values, valid_lens);  // the mistake
#else
  auto const out = attention(queries, keys, values, valid_lens);  // the fix
#endif
  (void)out;
}
