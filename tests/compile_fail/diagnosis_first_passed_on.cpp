// Lengths masked along the wrong dim, and the rejected weights passed on:
// to the next operation, into a tensor of the user's own type, and to a
// function of the user's: the masked_softmax diagnosis must be the first
// error (the harness checks the first error of every file), and passing the
// rejected result on must add none.
#include <dimtensor/dimtensor.hpp>
// EXPECT: valid_lens_measure_another_dim<dimtensor::call::masked_softmax, dimtensor::diagnostic::measured<KVPairs>, dimtensor::diagnostic::masked<Queries> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(ValueFeat);

namespace {
float first_weight(dt::tensor<float, Batch, Queries, KVPairs> const& w) { return w(Batch(0), Queries(0), KVPairs(0)); }
}  // namespace

int main() {
  auto const scores = dt::randn<float>(Batch(2), Queries(3), KVPairs(5));
  auto const values = dt::randn<float>(Batch(2), KVPairs(5), ValueFeat(4));
  dt::lengths<KVPairs, Batch> const valid_lens{2, 4};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const weights = dt::masked_softmax<Queries>(scores, valid_lens);  // the mistake
#else
  auto const weights = dt::masked_softmax<KVPairs>(scores, valid_lens);  // the fix
#endif
  auto const out = dt::contract<KVPairs>(weights, values);
  dt::tensor<float, Batch, Queries, KVPairs> const kept = weights;
  float const w0 = first_weight(weights);
  (void)out;
  (void)kept;
  (void)w0;
}
