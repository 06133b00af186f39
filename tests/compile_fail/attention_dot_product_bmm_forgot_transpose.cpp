// Scaled dot-product attention written with bmm, as d2l's
// DotProductAttention.forward, but without keys.transpose(1, 2): bmm sums
// over the queries' last dim (Hidden) while the keys offer KVPairs there.
#include <cmath>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: bmm_inner_dims_disagree<dimtensor::diagnostic::left_contracts<Hidden>, dimtensor::diagnostic::right_offers<KVPairs>, dimtensor::diagnostic::fix_transpose_right<KVPairs, Hidden> ?>
// EXPECT: bmm sums over the left operand's last dim and the right operand's middle dim, and they differ
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), Hidden(2));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  float const scale = 1.0f / std::sqrt(2.0f);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const scores = dt::bmm(queries, keys) * scale;  // the mistake
#else
  auto const scores = dt::bmm(queries, dt::transpose<KVPairs, Hidden>(keys)) * scale;  // the fix
#endif
  auto const weights = dt::masked_softmax<KVPairs>(scores, valid_lens);
  auto const out = dt::bmm(weights, values);
  (void)out;
}
