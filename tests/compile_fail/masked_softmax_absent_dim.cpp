// masked_softmax over a dim the scores do not have (DESIGN.md's example).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/masked_softmax.hpp>

#include <cstdint>

// EXPECT: not_a_dimension_of<dimtensor::call::masked_softmax, Hidden, dimtensor::dims<Batch, Queries, KVPairs> ?>
// EXPECT: the named dimension is not a dimension of the tensor

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

namespace dt = dimtensor;

int main() {
  auto const scores = dt::zeros<float>(Batch(2), Queries(1), KVPairs(10));
  auto const valid_lens = dt::tensor<std::int64_t, Batch>{2, 6};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto weights = dt::masked_softmax<Hidden>(scores, valid_lens);
#else
  auto weights = dt::masked_softmax<KVPairs>(scores, valid_lens);
#endif
  (void)weights;
}
