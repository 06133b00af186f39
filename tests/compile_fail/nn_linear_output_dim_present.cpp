// A linear<Feat, Hidden> applied to a tensor that already has Hidden: the
// result would have Hidden twice.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/linear.hpp>
// EXPECT: linear_output_dim_present<Feat, Hidden, dimtensor::dims<Batch, Hidden, Feat> ?>
// EXPECT: linear<In, Out> applied to a tensor that already has its output dim Out
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Heads);
int main() {
  dt::nn::linear<Feat, Hidden> const proj(Feat(4), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const x = dt::ones<float>(Batch(2), Hidden(3), Feat(4));  // the mistake
#else
  auto const x = dt::ones<float>(Batch(2), Heads(3), Feat(4));  // the fix
#endif
  auto const y = proj(x);
  (void)y;
}
