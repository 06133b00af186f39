// valid_lens with a static extent that differs from the scores'.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/masked_softmax.hpp>

#include <cstdint>

// EXPECT: extent_mismatch<dimtensor::call::masked_softmax, Batch, dimtensor::diagnostic::extents<2, 3> ?>
// EXPECT: static extents disagree for a dimension

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(KVPairs);

namespace dt = dimtensor;

int main() {
  auto const scores = dt::zeros<float>(Batch::fixed<2>{}, KVPairs(10));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const valid_lens = dt::zeros<std::int64_t>(Batch::fixed<3>{});
#else
  auto const valid_lens = dt::zeros<std::int64_t>(Batch::fixed<2>{});
#endif
  auto weights = dt::masked_softmax<KVPairs>(scores, valid_lens);
  (void)weights;
}
