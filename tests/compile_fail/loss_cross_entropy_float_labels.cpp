// Class labels are integer class indices; float labels (probabilities, or
// indices stored as float) do not compile.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/loss.hpp>
// EXPECT: labels_not_integer<dimtensor::call::cross_entropy, float ?>
// EXPECT: class labels must hold std::int64_t
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Vocab);

int main() {
  auto const logits = dt::randn<float>(Batch(2), Vocab(5));
  auto const labels = dt::tensor<float, Batch>{1, 4};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const loss = dt::nn::cross_entropy<Vocab>(logits, labels);  // the mistake
#else
  auto const loss = dt::nn::cross_entropy<Vocab>(logits, dt::cast<std::int64_t>(labels));  // the fix
#endif
  (void)loss;
}
