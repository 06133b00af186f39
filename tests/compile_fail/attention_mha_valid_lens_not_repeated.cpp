// d2l's multi-head attention written by hand: after transpose_qkv the batch
// holds batch_size * num_heads entries (BatchHeads), so valid_lens must be
// repeated per head (torch.repeat_interleave(valid_lens, num_heads, dim=0)).
// Forgetting it leaves lengths indexed by Batch, which the scores
// [BatchHeads, Queries, KVPairs] no longer have.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: valid_lens_not_a_leading_part<dimtensor::call::masked_softmax, dimtensor::dims<Batch>, dimtensor::dims<dimtensor::nn::BatchHeads, Queries> ?>
// EXPECT: valid_lens' dims must be a leading part \(a prefix, in order\) of the scores' dims
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

int main() {
  using dt::nn::BatchHeads;
  dt::index_t const num_heads = 5;
  auto const X = dt::ones<float>(Batch(2), Queries(4), Hidden(100));
  auto const Y = dt::ones<float>(Batch(2), KVPairs(6), Hidden(100));
  auto const valid_lens = dt::tensor<int, Batch>{3, 2};
  auto const queries = dt::nn::transpose_qkv<Batch, Hidden>(X, dt::nn::Heads(num_heads));
  auto const keys = dt::nn::transpose_qkv<Batch, Hidden>(Y, dt::nn::Heads(num_heads));
  dt::nn::dot_product_attention<Queries, KVPairs, dt::nn::HeadFeat> attention;
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const output = attention(queries, keys, keys, valid_lens);  // the mistake
#else
  auto const output = attention(queries, keys, keys, dt::repeat_interleave<Batch, BatchHeads>(valid_lens, num_heads));
#endif
  auto const output_concat = dt::nn::transpose_output<Batch, Hidden>(output, num_heads);
  (void)output_concat;
}
