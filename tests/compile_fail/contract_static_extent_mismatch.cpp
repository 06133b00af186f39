// contract<Hidden> whose batch dim (Heads, in both operands) has two
// different static extents.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/contract.hpp>
// EXPECT: extent_mismatch<dimtensor::call::contract, Heads, dimtensor::diagnostic::extents<4, 8> ?>
// EXPECT: static extents disagree for a dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const q = dt::ones<float>(Heads::fixed<4>{}, Queries(3), Hidden(16));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const k = dt::ones<float>(KVPairs(5), Heads::fixed<8>{}, Hidden(16));
#else
  auto const k = dt::ones<float>(KVPairs(5), Heads::fixed<4>{}, Hidden(16));
#endif
  auto const scores = dt::contract<Hidden>(q, k);
  (void)scores;
}
