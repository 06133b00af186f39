// split<Hidden, Heads, HeadFeat>(x, Batch(2)): the count names a dim that is
// neither of the two the split makes (it must be Heads(n) or HeadFeat(n)).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/split.hpp>
// EXPECT: parts_not_an_extent_of<dimtensor::call::split, Heads, Batch ?>
// EXPECT: n is the extent of Outer or of Inner, written Outer\(n\), Inner\(n\)
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
int main() {
  auto const x = dt::ones<float>(Batch(2), Hidden(6));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::split<Hidden, Heads, HeadFeat>(x, Batch(2));
#else
  auto const y = dt::split<Hidden, Heads, HeadFeat>(x, HeadFeat(2));
#endif
  (void)y;
}
