// bmm(queries, keys) without transposing the keys: bmm sums over the left
// operand's last dim (Hidden) but the right operand's middle dim is KVPairs.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
#include <dimtensor/ops/transpose.hpp>
// EXPECT: bmm_inner_dims_disagree<dimtensor::diagnostic::left_contracts<Hidden>, dimtensor::diagnostic::right_offers<KVPairs>, dimtensor::diagnostic::fix_transpose_right<KVPairs, Hidden> ?>
// EXPECT: the fix is computed from your operands. dims
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const queries = dt::ones<float>(Batch(2), Queries(1), Hidden(8));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const scores = dt::bmm(queries, keys);
#else
  auto const scores = dt::bmm(queries, dt::transpose<KVPairs, Hidden>(keys));
#endif
  (void)scores;
}
