// permute naming a dim twice (and so leaving another one out).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/permute.hpp>
// EXPECT: named_twice<dimtensor::call::permute, Heads, dimtensor::dims<Batch, Heads, Heads, HeadFeat> ?>
// EXPECT: the call names the same dimension twice
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
int main() {
  auto const x = dt::ones<float>(Batch(2), Queries(4), Heads(3), HeadFeat(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::permute<Batch, Heads, Heads, HeadFeat>(x);
#else
  auto const y = dt::permute<Batch, Heads, Queries, HeadFeat>(x);
#endif
  (void)y;
}
