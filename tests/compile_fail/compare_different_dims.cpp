// allclose of tensors whose dims are in another order: compare like with like.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/compare.hpp>
#include <dimtensor/ops/transpose.hpp>
// EXPECT: different_dims<dimtensor::call::allclose, dimtensor::dims<Queries, KVPairs>, dimtensor::dims<KVPairs, Queries> ?>
// EXPECT: the compared tensors must have the same dims in the same order
namespace dt = dimtensor;
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
int main() {
  auto const weights = dt::ones<float>(Queries(2), KVPairs(3));
  auto const expected = dt::ones<float>(KVPairs(3), Queries(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  bool const close = dt::allclose(weights, expected);
#else
  bool const close = dt::allclose(weights, dt::transpose<KVPairs, Queries>(expected));
#endif
  return close ? 0 : 1;
}
