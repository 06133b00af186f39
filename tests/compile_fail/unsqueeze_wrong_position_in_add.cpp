// d2l's additive attention: queries.unsqueeze(2) + keys.unsqueeze(1).
// Written with unsqueeze<KVPairs, 1> on the queries, the new KVPairs lands
// at position 1, where the keys have Queries: the + names both.
#include <dimtensor/dimtensor.hpp>
// EXPECT: operands_disagree<dimtensor::call::plus, dimtensor::diagnostic::at_position<1>, dimtensor::diagnostic::left_has<KVPairs>, dimtensor::diagnostic::right_has<Queries> ?>
// EXPECT: the operands' dims, aligned from the right, must be the same dimension at every position
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const queries = dt::ones<float>(Batch(2), Queries(1), Hidden(8));  // W_q(queries)
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden(8));    // W_k(keys)
#ifdef DIMTENSOR_COMPILE_FAIL
  auto features = dt::tanh(dt::unsqueeze<KVPairs, 1>(queries) + dt::unsqueeze<Queries, 1>(keys));
#else
  auto features = dt::tanh(dt::unsqueeze<KVPairs, 2>(queries) + dt::unsqueeze<Queries, 1>(keys));
#endif
  dt::tensor<float, Batch, Queries, KVPairs, Hidden> const f = features;
  (void)f;
}
