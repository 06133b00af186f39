// softmax over a dim the scores do not have.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/softmax.hpp>

// EXPECT: not_a_dimension_of<dimtensor::call::softmax, Hidden, dimtensor::dims<Batch, Queries, KVPairs> ?>
// EXPECT: the named dimension is not a dimension of the tensor

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

namespace dt = dimtensor;

int main() {
  auto const scores = dt::zeros<float>(Batch(2), Queries(1), KVPairs(10));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto weights = dt::softmax<Hidden>(scores);
#else
  auto weights = dt::softmax<KVPairs>(scores);
#endif
  (void)weights;
}
