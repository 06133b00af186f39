// bmm whose result would have Queries twice: [Batch, Queries, Queries].
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
// EXPECT: bmm_free_dims_collide<dimtensor::diagnostic::left_keeps<Queries>, dimtensor::diagnostic::right_keeps<Queries> ?>
// EXPECT: so the result would have it twice
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const q = dt::ones<float>(Batch(2), Queries(3), Hidden(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const k = dt::ones<float>(Batch(2), Hidden(4), Queries(3));
#else
  auto const k = dt::ones<float>(Batch(2), Hidden(4), KVPairs(3));
#endif
  auto const scores = dt::bmm(q, k);
  (void)scores;
}
