// dot_product_attention<Queries, KVPairs, Hidden> sums queries and keys over
// Hidden, so both must name their features Hidden.  Keys whose features
// are KeyFeat (as in additive attention, where the sizes may differ) lack it.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::dot_product_attention, dimtensor::operand::keys, Hidden, dimtensor::dims<Batch, KVPairs, KeyFeat> ?>
// EXPECT: an attention operand lacks a dim that the module names
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), Hidden(2));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention(0.5);
  attention.eval();
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = attention(queries, keys, values, valid_lens);  // the mistake
#else
  auto const out = attention(queries, dt::rename<KeyFeat, Hidden>(keys), values, valid_lens);  // the fix
#endif
  (void)out;
}
