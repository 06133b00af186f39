// squeeze of a dim whose static extent is 8: only an extent of 1 can be removed.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/squeeze.hpp>
// EXPECT: extent_is_not_1<dimtensor::call::squeeze, Hidden, dimtensor::diagnostic::static_extent<8> ?>
// EXPECT: squeeze removes a dimension of extent 1, and this dimension has a static extent other than 1
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Score);
int main() {
  auto const hidden = dt::ones<float>(Batch(2), Hidden::fixed<8>{});
  auto const score = dt::ones<float>(Batch(2), Score::fixed<1>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::squeeze<Hidden>(hidden);
#else
  auto const y = dt::squeeze<Score>(score);
#endif
  (void)hidden;
  (void)score;
  (void)y;
}
