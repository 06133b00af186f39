// Queries and keys whose static feature sizes differ (8 and 16): scaled
// dot-product attention sums them over Hidden, so the sizes must agree.
// (Additive attention allows different sizes, with different dims.)
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: extent_mismatch<dimtensor::call::[a-z_]+, Hidden, dimtensor::diagnostic::extents<8, 16> ?>
// EXPECT: static extents disagree for a dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), Hidden::fixed<8>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden::fixed<16>{});  // the mistake
#else
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden::fixed<8>{});  // the fix
#endif
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention(0.5);
  attention.eval();
  auto const out = attention(queries, keys, values, valid_lens);
  (void)out;
}
