// unsqueeze of a dim the tensor already has: a dim may appear only once.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/unsqueeze.hpp>
// EXPECT: already_a_dimension_of<dimtensor::call::unsqueeze, Queries, dimtensor::dims<Batch, Queries, Hidden> ?>
// EXPECT: the new dimension is already a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const queries = dt::ones<float>(Batch(2), Queries(1), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const q = dt::unsqueeze<Queries, 2>(queries);
#else
  auto const q = dt::unsqueeze<KVPairs, 2>(queries);
#endif
  (void)q;
}
