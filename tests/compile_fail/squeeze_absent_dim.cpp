// squeeze<Score> of scores that have no Score dim (it was squeezed already).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/squeeze.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::squeeze, Score, dimtensor::dims<Batch, Queries, KVPairs> ?>
// EXPECT: the named dimension is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Score);
int main() {
  auto const features = dt::ones<float>(Batch(2), Queries(1), KVPairs(10), Score::fixed<1>{});
  auto const scores = dt::squeeze<Score>(features);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const again = dt::squeeze<Score>(scores);
#else
  auto const again = dt::squeeze<Score>(features);
#endif
  (void)again;
}
