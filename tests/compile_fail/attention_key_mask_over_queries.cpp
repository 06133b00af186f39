// A padding mask over the queries' dim instead of the keys': a key mask
// must have the keys' dim (the one masked) last, and only dims of the
// scores.
#include <dimtensor/dimtensor.hpp>
// EXPECT: mask_dims_not_of_scores<dimtensor::call::scaled_dot_product_attention, dimtensor::dims<Batch, Queries>, dimtensor::dims<Batch, Queries, KVPairs>
// EXPECT: a key or additive mask's dims must be dims of the scores, the keys' dim last
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);

int main() {
  auto const q = dt::randn<float>(Batch(2), Queries(3), Feat(4));
  auto const k = dt::randn<float>(Batch(2), KVPairs(5), Feat(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const keep = dt::ones<float>(Batch(2), Queries(3)) > 0.0f;  // the mistake
#else
  auto const keep = dt::ones<float>(Batch(2), KVPairs(5)) > 0.0f;  // the fix
#endif
  auto const m = dt::masking_of<KVPairs>().key_mask(keep);
  auto const out = dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, k, m);
  (void)out;
}
