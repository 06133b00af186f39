// scaled_dot_product_attention given a masking of lengths over [Queries]:
// the operation checks a masking's lengths as masked_softmax checks them,
// on its kernels' path too (they must lead the scores' dims without KV).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/masking.hpp>
// EXPECT: valid_lens_not_a_leading_part<dimtensor::call::masked_softmax, dimtensor::dims<Queries>, dimtensor::dims<Batch, Queries> ?>
// EXPECT: valid_lens' dims must be a leading part \(a prefix, in order\) of the scores' dims
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);

int main() {
  auto const q = dt::ones<float>(Batch(2), Queries(3), Feat(4));
  auto const k = dt::ones<float>(Batch(2), KVPairs(5), Feat(4));
  auto const v = dt::ones<float>(Batch(2), KVPairs(5), Feat(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const m = dt::masking_of<KVPairs>(dt::tensor<std::int64_t, Queries>{1, 2, 3});  // the mistake
#else
  auto const m = dt::masking_of<KVPairs>(dt::tensor<std::int64_t, Batch>{1, 5});  // the fix
#endif
  auto const out = dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, m);
  (void)out;
}
