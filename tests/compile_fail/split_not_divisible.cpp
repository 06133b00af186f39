// split of a static Hidden[8] into 3 heads: 8 is not a multiple of 3.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/split.hpp>
// EXPECT: not_divisible<dimtensor::call::split, Hidden, dimtensor::diagnostic::extents<8, 3> ?>
// EXPECT: the static extent of the dimension is not a multiple of the number of parts
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
int main() {
  auto const x = dt::ones<float>(Batch(2), Queries(4), Hidden::fixed<8>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::split<Hidden, Heads, HeadFeat>(x, Heads::fixed<3>{});
#else
  auto const y = dt::split<Hidden, Heads, HeadFeat>(x, Heads::fixed<4>{});
#endif
  (void)y;
}
