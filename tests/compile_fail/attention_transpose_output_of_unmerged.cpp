// Multi-head attention's output joined with d2l's transpose_output, but
// applied to the named form's output [Batch, Queries, Heads, HeadFeat]:
// transpose_output undoes transpose_qkv and needs the merged batch-and-heads
// dim; the named form joins its heads with merge<Heads, HeadFeat, Hidden>.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: transpose_output_of_unmerged<dimtensor::call::transpose_output, dimtensor::nn::BatchHeads, dimtensor::dims<Batch, Queries, dimtensor::nn::Heads, dimtensor::nn::HeadFeat> ?>
// EXPECT: transpose_output undoes transpose_qkv, so its input must have the merged batch-and-heads dim
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

int main() {
  using dt::nn::HeadFeat;
  using dt::nn::Heads;
  auto const heads = Heads(5);
  auto const q = dt::split<Hidden, Heads, HeadFeat>(dt::ones<float>(Batch(2), Queries(4), Hidden(100)), heads);
  auto const k = dt::split<Hidden, Heads, HeadFeat>(dt::ones<float>(Batch(2), KVPairs(6), Hidden(100)), heads);
  dt::nn::dot_product_attention<Queries, KVPairs, HeadFeat> attention;
  auto const output = attention(q, k, k);  // [Batch, Queries, Heads, HeadFeat]
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const output_concat = dt::nn::transpose_output<Batch, Hidden>(output, 5);  // the mistake
#else
  auto const output_concat = dt::merge<Heads, HeadFeat, Hidden>(output);  // the fix
#endif
  dt::tensor<float, Batch, Queries, Hidden> const joined = output_concat;
  (void)joined;
}
