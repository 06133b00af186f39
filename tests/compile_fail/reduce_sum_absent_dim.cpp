// sum over a dim the tensor does not have.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/reduce.hpp>

// EXPECT: not_a_dimension_of<dimtensor::call::sum, Hidden, dimtensor::dims<Batch, Queries, KVPairs> ?>
// EXPECT: the named dimension is not a dimension of the tensor

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

namespace dt = dimtensor;

int main() {
  auto const weights = dt::ones<float>(Batch(2), Queries(1), KVPairs(10));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto total = dt::sum<Hidden>(weights);
#else
  auto total = dt::sum<KVPairs>(weights);
#endif
  (void)total;
}
