// argmax (keep_dim) over a dim the tensor does not have.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/reduce.hpp>

// EXPECT: not_a_dimension_of<dimtensor::call::argmax, Steps, dimtensor::dims<Batch, Vocab> ?>
// EXPECT: the named dimension is not a dimension of the tensor

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);

namespace dt = dimtensor;

int main() {
  auto const logits = dt::ones<float>(Batch(2), Vocab(10));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto token = dt::argmax<Steps>(logits, dt::keep_dim);
#else
  auto token = dt::argmax<Vocab>(logits, dt::keep_dim);
#endif
  (void)token;
}
