// d2l's form of multi-head attention on sequence-first operands
// [Queries, Batch, Hidden]: transpose_qkv merges the operands' first dim
// with the heads, as d2l's X.shape[0], so the batch must come first.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: d2l_form_needs_batch_first<dimtensor::call::multi_head_attention, Queries, dimtensor::dims<Queries, Batch, Hidden> ?>
// EXPECT: merges the batch, its operands' first dim, with the heads
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

int main() {
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(8), Hidden(8), Hidden(8), Hidden(8),
                                                                   dt::nn::Heads(2));
  attention.eval();
  auto const X = dt::ones<float>(Queries(4), Batch(2), Hidden(8));
  auto const Y = dt::ones<float>(KVPairs(6), Batch(2), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = attention.forward_d2l(X, Y, Y);  // the mistake
#else
  auto const out = attention.forward_d2l(dt::transpose<Queries, Batch>(X), dt::transpose<KVPairs, Batch>(Y),
                                         dt::transpose<KVPairs, Batch>(Y));  // the fix
#endif
  (void)out;
}
