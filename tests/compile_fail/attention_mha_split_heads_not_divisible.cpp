// Splitting a static hidden size into heads by hand: Hidden = 100 into 3
// heads.  split needs the number of heads to divide the extent.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: not_divisible<dimtensor::call::split, Hidden, dimtensor::diagnostic::extents<100, 3> ?>
// EXPECT: the static extent of the dimension is not a multiple of the number of parts it is split into
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);

int main() {
  using dt::nn::HeadFeat;
  using dt::nn::Heads;
  auto const X = dt::ones<float>(Batch(2), Queries(4), Hidden::fixed<100>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const q = dt::split<Hidden, Heads, HeadFeat>(X, Heads::fixed<3>{});  // the mistake
#else
  auto const q = dt::split<Hidden, Heads, HeadFeat>(X, Heads::fixed<5>{});  // the fix
#endif
  dt::tensor<float, Batch, Queries, Heads::fixed<5>, HeadFeat::fixed<20>> const heads = q;
  (void)heads;
}
