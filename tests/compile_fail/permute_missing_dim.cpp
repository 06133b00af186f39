// permute that leaves out one of the tensor's dims (HeadFeat).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/permute.hpp>
// EXPECT: missing_from_permutation<dimtensor::call::permute, HeadFeat, dimtensor::dims<Batch, Heads, Queries>, dimtensor::dims<Batch, Queries, Heads, HeadFeat> ?>
// EXPECT: permute must name every dimension of the tensor exactly once, and this one is missing
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
int main() {
  auto const x = dt::ones<float>(Batch(2), Queries(4), Heads(3), HeadFeat(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::permute<Batch, Heads, Queries>(x);
#else
  auto const y = dt::permute<Batch, Heads, Queries, HeadFeat>(x);
#endif
  (void)y;
}
