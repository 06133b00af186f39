// valid_lens holding floats: lengths are counts.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/masked_softmax.hpp>

#include <cstdint>

// EXPECT: valid_lens_not_integral<dimtensor::call::masked_softmax, float ?>
// EXPECT: valid_lens must hold std::int32_t or std::int64_t elements

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);

namespace dt = dimtensor;

int main() {
  auto const scores = dt::zeros<float>(Batch(2), Queries(1), KVPairs(10));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const valid_lens = dt::tensor<float, Batch>{2, 6};
#else
  auto const valid_lens = dt::tensor<std::int32_t, Batch>{2, 6};
#endif
  auto weights = dt::masked_softmax<KVPairs>(scores, valid_lens);
  (void)weights;
}
