// unsqueeze at a position past the rank: a rank-2 tensor takes positions 0, 1, 2.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/unsqueeze.hpp>
// EXPECT: position_past_rank<dimtensor::call::unsqueeze, dimtensor::diagnostic::at_position<3>, dimtensor::diagnostic::tensor_rank<2>, dimtensor::dims<Batch, Queries> ?>
// EXPECT: the position is past the rank of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
int main() {
  auto const x = dt::ones<float>(Batch(2), Queries(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::unsqueeze<KVPairs, 3>(x);
#else
  auto const y = dt::unsqueeze<KVPairs, 2>(x);
#endif
  (void)y;
}
