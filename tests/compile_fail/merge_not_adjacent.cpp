// d2l's transpose_qkv without the permute: Batch and Heads are not adjacent.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/merge.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/split.hpp>
// EXPECT: not_adjacent<dimtensor::call::merge, Batch, Heads, dimtensor::dims<Batch, Queries, Heads, HeadFeat> ?>
// EXPECT: merge<A, B, To> needs B immediately after A in the tensor's dims
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
DIMTENSOR_DIM(BatchHeads);
int main() {
  auto const x = dt::ones<float>(Batch(2), Queries(4), Hidden(6));
  auto const heads = dt::split<Hidden, Heads, HeadFeat>(x, Heads(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::merge<Batch, Heads, BatchHeads>(heads);
#else
  auto const y = dt::merge<Batch, Heads, BatchHeads>(dt::permute<Batch, Heads, Queries, HeadFeat>(heads));
#endif
  (void)y;
}
