// Causal masking named along the batch dim instead of the queries': the
// call's causal masking must be along its queries' dim.
#include <dimtensor/dimtensor.hpp>
// EXPECT: causal_along_another_dim<dimtensor::call::scaled_dot_product_attention, Batch, Queries>
// EXPECT: causal masking must be along the call's queries' dim
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);

int main() {
  auto const q = dt::randn<float>(Batch(2), Queries(3), Feat(4));
  auto const k = dt::randn<float>(Batch(2), KVPairs(5), Feat(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const m = dt::causal<Batch>(dt::masking_of<KVPairs>());  // the mistake
#else
  auto const m = dt::causal<Queries>(dt::masking_of<KVPairs>());  // the fix
#endif
  auto const out = dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, k, m);
  (void)out;
}
