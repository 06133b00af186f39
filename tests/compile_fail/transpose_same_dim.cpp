// transpose<Hidden, Hidden>: swapping a dim with itself is certainly not what was meant.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/transpose.hpp>
// EXPECT: named_twice<dimtensor::call::transpose, Hidden, dimtensor::dims<Hidden, Hidden> ?>
// EXPECT: the call names the same dimension twice where it needs different ones
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const kt = dt::transpose<Hidden, Hidden>(keys);
#else
  auto const kt = dt::transpose<KVPairs, Hidden>(keys);
#endif
  (void)kt;
}
