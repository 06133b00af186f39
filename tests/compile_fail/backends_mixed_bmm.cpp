// bmm of a CPU tensor and a Thrust tensor: contractions need both operands
// on one backend.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/backends/thrust.hpp>
// EXPECT: backends_differ
// EXPECT: the operands live on different backends
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const queries = dt::to<dt::thrust_cpp>(dt::ones<float>(Batch(2), Queries(1), Hidden(8)));
  auto const keys = dt::ones<float>(Batch(2), Hidden(8), KVPairs(10));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const scores = dt::bmm(queries, keys);
#else
  auto const scores = dt::bmm(queries, dt::to<dt::thrust_cpp>(keys));
#endif
  (void)scores;
}
