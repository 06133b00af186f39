// Token ids are integers: they select rows of an embedding and have no
// gradient.  Asking one to require gradients names the call and the type.
#include <cstdint>
#include <dimtensor/dimtensor.hpp>
// EXPECT: not_differentiable<dimtensor::call::requires_grad, (long int|int64_t|long)>
// EXPECT: only float and double tensors have gradients
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);

int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<std::int64_t, Batch, Steps> tokens{{1, 2, 3}, {4, 5, 6}};
  tokens.requires_grad_();  // the mistake
#else
  dt::tensor<float, Batch, Steps> tokens{{1, 2, 3}, {4, 5, 6}};
  tokens.requires_grad_();  // a float tensor can require gradients
#endif
  (void)tokens;
}
