// Multi-head attention in the named form, joining the heads by hand:
// the output [Batch, Queries, Heads, HeadFeat] is merged back into Hidden
// head-major, merge<Heads, HeadFeat, Hidden>.  Naming the two in the other
// order asks for HeadFeat immediately followed by Heads, which they are not.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: not_adjacent<dimtensor::call::merge, dimtensor::nn::HeadFeat, dimtensor::nn::Heads, dimtensor::dims<Batch, Queries, dimtensor::nn::Heads, dimtensor::nn::HeadFeat> ?>
// EXPECT: merge<A, B, To> needs B immediately after A in the tensor's dims
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
  auto const output_concat = dt::merge<HeadFeat, Heads, Hidden>(output);  // the mistake
#else
  auto const output_concat = dt::merge<Heads, HeadFeat, Hidden>(output);  // the fix
#endif
  dt::tensor<float, Batch, Queries, Hidden> const joined = output_concat;
  (void)joined;
}
