// d2l's masked_softmax over the queries' axis with lengths that count the
// key-value pairs: with untyped [Batch] lengths it is accepted (and wrong
// unless a length exceeds the queries' extent); lengths that name the dim
// they measure make it a compile error naming both dims.
#include <dimtensor/dimtensor.hpp>
// EXPECT: valid_lens_measure_another_dim<dimtensor::call::masked_softmax, dimtensor::diagnostic::measured<KVPairs>, dimtensor::diagnostic::masked<Queries> ?>
// EXPECT: the valid lengths measure another dim than the one the call masks
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);

int main() {
  auto const scores = dt::randn<float>(Batch(2), Queries(4), KVPairs(4));
  dt::lengths<KVPairs, Batch> const valid_lens{2, 3};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const weights = dt::masked_softmax<Queries>(scores, valid_lens);  // the mistake
#else
  auto const weights = dt::masked_softmax<KVPairs>(scores, valid_lens);  // the fix
#endif
  (void)weights;
}
