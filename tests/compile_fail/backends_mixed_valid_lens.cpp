// masked_softmax of Thrust scores with valid lengths left on the CPU.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/backends/thrust.hpp>
// EXPECT: backends_differ
// EXPECT: the operands live on different backends
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
int main() {
  auto const scores = dt::to<dt::thrust_cpp>(dt::ones<float>(Batch(2), Queries(2), KVPairs(4)));
  dt::tensor<std::int64_t, Batch> const valid_lens{2, 3};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const weights = dt::masked_softmax<KVPairs>(scores, valid_lens);
#else
  auto const weights = dt::masked_softmax<KVPairs>(scores, dt::to<dt::thrust_cpp>(valid_lens));
#endif
  (void)weights;
}
