// Values whose KVPairs differ from the keys': with static extents, the keys
// have 10 key-value pairs and the values 6.  The weights, [Batch, Queries,
// KVPairs=10], cannot be summed against values of 6 pairs.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: extent_mismatch<dimtensor::call::[a-z_]+, KVPairs, dimtensor::diagnostic::extents<10, 6> ?>
// EXPECT: static extents disagree for a dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), Hidden(2));
  auto const keys = dt::ones<float>(Batch(2), KVPairs::fixed<10>{}, Hidden(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const values = dt::ones<float>(Batch(2), KVPairs::fixed<6>{}, ValueFeat(4));  // the mistake
#else
  auto const values = dt::ones<float>(Batch(2), KVPairs::fixed<10>{}, ValueFeat(4));  // the fix
#endif
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention(0.5);
  attention.eval();
  auto const out = attention(queries, keys, values, valid_lens);
  (void)out;
}
