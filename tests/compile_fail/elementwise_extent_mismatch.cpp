// Static extents that differ: Hidden::fixed<8> + Hidden::fixed<16>.
#include <dimtensor/dimtensor.hpp>
// EXPECT: extent_mismatch<dimtensor::call::plus, Hidden, dimtensor::diagnostic::extents<8, 16> ?>
// EXPECT: static extents disagree for a dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
int main() {
  auto a = dt::ones<float>(Batch(2), Hidden::fixed<8>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto b = dt::ones<float>(Batch(2), Hidden::fixed<16>{});
#else
  auto b = dt::ones<float>(Batch(2), Hidden::fixed<8>{});
#endif
  auto c = dt::eval(a + b);
  (void)c;
}
