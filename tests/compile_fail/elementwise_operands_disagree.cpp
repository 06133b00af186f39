// Additive attention with unsqueeze at the wrong positions: aligned from the
// right, position 1 holds KVPairs on the left and Queries on the right.
#include <dimtensor/dimtensor.hpp>
// EXPECT: operands_disagree<dimtensor::call::plus, dimtensor::diagnostic::at_position<1>, dimtensor::diagnostic::left_has<KVPairs>, dimtensor::diagnostic::right_has<Queries> ?>
// EXPECT: the operands' dims, aligned from the right, must be the same dimension at every position
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  auto a = dt::zeros<float>(Batch(2), KVPairs::fixed<1>{}, Queries(3), Hidden(4));
  auto b = dt::zeros<float>(Batch(2), Queries::fixed<1>{}, KVPairs(5), Hidden(4));
#else
  auto a = dt::zeros<float>(Batch(2), Queries(3), KVPairs::fixed<1>{}, Hidden(4));
  auto b = dt::zeros<float>(Batch(2), Queries::fixed<1>{}, KVPairs(5), Hidden(4));
#endif
  dt::tensor<float, Batch, Queries, KVPairs, Hidden> features = dt::tanh(a + b);
  (void)features;
}
