// Additive attention's broadcasting carried over into dot-product attention:
// the keys unsqueezed over Queries (d2l's keys.unsqueeze(1)) before the
// call.  The keys now carry the queries' sequence dim, which the module
// reserves for the queries.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_has_foreign_dim<dimtensor::call::dot_product_attention, dimtensor::operand::keys, Queries, dimtensor::dims<Batch, dimtensor::fixed<Queries, 1>, KVPairs, Hidden> ?>
// EXPECT: an attention operand has a dim that belongs to another operand
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
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention(0.5);
  attention.eval();
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = attention(queries, dt::unsqueeze<Queries, 1>(keys), values, valid_lens);  // the mistake
#else
  auto const out = attention(queries, keys, values, valid_lens);  // the fix
#endif
  (void)out;
}
