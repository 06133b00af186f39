// valid_lens typed by the wrong dim: one length per query, [Queries],
// instead of one per batch row, [Batch] (or [Batch, Queries]).  The lengths
// must index a leading part of the scores' dims without KVPairs.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: valid_lens_not_a_leading_part<dimtensor::call::masked_softmax, dimtensor::dims<Queries>, dimtensor::dims<Batch, Queries> ?>
// EXPECT: valid_lens' dims must be a leading part \(a prefix, in order\) of the scores' dims
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(2), Hidden(2));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const valid_lens = dt::tensor<int, Queries>{2, 6};  // the mistake
#else
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};  // the fix
#endif
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention(0.5);
  attention.eval();
  auto const out = attention(queries, keys, values, valid_lens);
  (void)out;
}
