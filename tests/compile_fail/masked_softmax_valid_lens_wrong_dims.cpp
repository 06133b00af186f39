// valid_lens typed [Queries] for scores [Batch, Queries, KVPairs]: the
// lengths must lead the scores' dims without KVPairs ([Batch] or [Batch, Queries]).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/masked_softmax.hpp>

#include <cstdint>

// EXPECT: valid_lens_not_a_leading_part<dimtensor::call::masked_softmax, dimtensor::dims<Queries>, dimtensor::dims<Batch, Queries> ?>
// EXPECT: valid_lens' dims must be a leading part .a prefix, in order. of the scores' dims without the masked dimension

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);

namespace dt = dimtensor;

int main() {
  auto const scores = dt::zeros<float>(Batch(2), Queries(2), KVPairs(10));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const valid_lens = dt::tensor<std::int64_t, Queries>{2, 6};
#else
  auto const valid_lens = dt::tensor<std::int64_t, Batch>{2, 6};
#endif
  auto weights = dt::masked_softmax<KVPairs>(scores, valid_lens);
  (void)weights;
}
