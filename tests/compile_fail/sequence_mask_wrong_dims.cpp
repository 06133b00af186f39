// sequence_mask with lengths per step instead of per batch row.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/sequence_mask.hpp>

#include <cstdint>

// EXPECT: valid_lens_not_a_leading_part<dimtensor::call::sequence_mask, dimtensor::dims<Steps>, dimtensor::dims<Batch> ?>
// EXPECT: valid_lens' dims must be a leading part

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);

namespace dt = dimtensor;

int main() {
  auto const x = dt::ones<float>(Batch(2), Steps(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const valid_len = dt::tensor<std::int64_t, Steps>{1, 2, 3};
#else
  auto const valid_len = dt::tensor<std::int64_t, Batch>{1, 2};
#endif
  auto masked = dt::sequence_mask<Steps>(x, valid_len);
  (void)masked;
}
