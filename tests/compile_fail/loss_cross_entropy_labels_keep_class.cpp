// F.cross_entropy takes one class index per position: the labels have the
// logits' dims without the class dim.  One-hot labels [Batch, Steps, Vocab]
// are a mistake the error names.
#include <cstdint>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/loss.hpp>
// EXPECT: labels_dims_differ<dimtensor::call::cross_entropy, dimtensor::dims<Batch, Steps, Vocab>, dimtensor::dims<Batch, Steps> ?>
// EXPECT: the labels must have the logits' dims without the class dim
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);

int main() {
  auto const logits = dt::randn<float>(Batch(2), Steps(3), Vocab(5));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const labels = dt::zeros<std::int64_t>(Batch(2), Steps(3), Vocab(5));  // the mistake: one-hot
#else
  auto const labels = dt::zeros<std::int64_t>(Batch(2), Steps(3));  // the fix: class indices
#endif
  auto const loss = dt::nn::cross_entropy<Vocab>(logits, labels);
  (void)loss;
}
