// softmax of an integer tensor: the result cannot be represented.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/softmax.hpp>

#include <cstdint>

// EXPECT: needs_floating_point<dimtensor::call::softmax, int>
// EXPECT: this call needs a floating-point tensor

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(KVPairs);

namespace dt = dimtensor;

int main() {
  auto const counts = dt::ones<std::int32_t>(Batch(2), KVPairs(10));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto weights = dt::softmax<KVPairs>(counts);
#else
  auto weights = dt::softmax<KVPairs>(dt::cast<float>(counts));
#endif
  (void)weights;
}
