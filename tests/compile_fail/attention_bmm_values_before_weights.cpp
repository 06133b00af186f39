// The weighted sum of the values written with bmm in the wrong order:
// bmm(values, weights) instead of bmm(weights, values).  The left operand's
// last dim (ValueFeat) is not the right operand's middle dim (Queries).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: bmm_inner_dims_disagree<dimtensor::diagnostic::left_contracts<ValueFeat>, dimtensor::diagnostic::right_offers<Queries>, dimtensor::diagnostic::fix_swap_operands ?>
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
  auto const scores = dt::bmm(queries, dt::transpose<KVPairs, Hidden>(keys));
  auto const weights = dt::masked_softmax<KVPairs>(scores, valid_lens);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = dt::bmm(values, weights);  // the mistake
#else
  auto const out = dt::bmm(weights, values);  // the fix
#endif
  (void)out;
}
