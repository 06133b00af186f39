// permute naming a dim the tensor does not have (Hidden).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/permute.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::permute, Hidden, dimtensor::dims<Batch, Queries, Heads, HeadFeat> ?>
// EXPECT: the named dimension is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const x = dt::ones<float>(Batch(2), Queries(4), Heads(3), HeadFeat(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::permute<Batch, Heads, Queries, HeadFeat, Hidden>(x);
#else
  auto const y = dt::permute<Batch, Heads, Queries, HeadFeat>(x);
#endif
  (void)y;
}
