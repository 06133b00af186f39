// Self-attention with the multi-head module, renaming the wrong dim: the
// sequence dim Queries must become KVPairs for the keys and values, but the
// feature dim Hidden was renamed instead.  The module checks its operands
// first: the keys lack the key features it maps, Hidden.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::multi_head_attention, dimtensor::operand::keys, Hidden, dimtensor::dims<Batch, Queries, KVPairs> ?>
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
  auto const kv = dt::rename<Hidden, KVPairs>(X);  // the mistake
#else
  auto const kv = dt::rename<Queries, KVPairs>(X);  // the fix
#endif
  auto const out = attention(X, kv, kv, valid_lens);
  (void)out;
}
