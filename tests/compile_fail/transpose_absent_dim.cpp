// transpose<KVPairs, Hidden> of keys whose feature dim is KeyFeat, not Hidden.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/transpose.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::transpose, Hidden, dimtensor::dims<Batch, KVPairs, KeyFeat> ?>
// EXPECT: the named dimension is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const kt = dt::transpose<KVPairs, Hidden>(keys);
#else
  auto const kt = dt::transpose<KVPairs, KeyFeat>(keys);
#endif
  (void)kt;
}
