// mean of an integer tensor: PyTorch refuses it too; cast first.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/reduce.hpp>

#include <cstdint>

// EXPECT: needs_floating_point<dimtensor::call::mean, long( int)?>
// EXPECT: this call needs a floating-point tensor

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);

namespace dt = dimtensor;

int main() {
  auto const lengths = dt::ones<std::int64_t>(Batch(2), Steps(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto average = dt::mean<Steps>(lengths);
#else
  auto average = dt::mean<Steps>(dt::cast<double>(lengths));
#endif
  (void)average;
}
