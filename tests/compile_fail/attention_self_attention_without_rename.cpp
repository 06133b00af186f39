// Self-attention (d2l 10.6): queries, keys and values are the same X.  X's
// sequence dim is Queries, so passed as the keys it lacks KVPairs, the dim
// the softmax runs over; rename it for the keys and values.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::dot_product_attention, dimtensor::operand::keys, KVPairs, dimtensor::dims<Batch, Queries, Hidden> ?>
// EXPECT: an attention operand lacks a dim that the module names
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

int main() {
  auto const X = dt::randn<float>(Batch(2), Queries(4), Hidden(8));
  auto const valid_lens = dt::tensor<int, Batch>{3, 2};
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention(0.5);
  attention.eval();
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = attention(X, X, X, valid_lens);  // the mistake
#else
  auto const kv = dt::rename<Queries, KVPairs>(X);  // the fix
  auto const out = attention(X, kv, kv, valid_lens);
#endif
  (void)out;
}
