// A count of correct predictions is an integer tensor: it has no gradient to
// back-propagate.  The loss must be a float or double tensor.
#include <dimtensor/dimtensor.hpp>
// EXPECT: not_differentiable<dimtensor::call::backward, (long int|int64_t|long)>
// EXPECT: only float and double tensors have gradients
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Classes);

int main() {
  auto logits = dt::randn<float>(Batch(4), Classes(3));
  logits.requires_grad_();
  dt::tensor<std::int64_t, Batch> const labels{0, 2, 1, 1};
  auto const hits = dt::sum(dt::cast<std::int64_t>(dt::eq(dt::argmax<Classes>(logits), labels)));
#ifdef DIMTENSOR_COMPILE_FAIL
  hits.backward();  // the mistake
#else
  auto const loss = dt::sum(logits * logits);
  loss.backward();  // a float loss
  (void)hits;
#endif
}
