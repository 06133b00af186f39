// Self-attention with the multi-head module: attention(X, X, X, valid_lens)
// as d2l writes it.  The module's keys must have KVPairs; X has Queries.
// The module checks its operands first and names the keys as the user
// passed them.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::multi_head_attention, dimtensor::operand::keys, KVPairs, dimtensor::dims<Batch, Queries, Hidden> ?>
// EXPECT: an attention operand lacks a dim that the module names
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

int main() {
  auto const X = dt::ones<float>(Batch(2), Queries(4), Hidden(100));
  auto const valid_lens = dt::tensor<int, Batch>{3, 2};
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(100), Hidden(100), Hidden(100), Hidden(100),
                                                                   dt::nn::Heads(5), 0.5);
  attention.eval();
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = attention(X, X, X, valid_lens);  // the mistake
#else
  auto const kv = dt::rename<Queries, KVPairs>(X);  // the fix
  auto const out = attention(X, kv, kv, valid_lens);
#endif
  (void)out;
}
