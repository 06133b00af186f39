// assign() of Hidden::fixed<16> values into a Hidden::fixed<8> tensor.
#include <dimtensor/dimtensor.hpp>
// EXPECT: extent_mismatch<dimtensor::call::tensor, Hidden, dimtensor::diagnostic::extents<8, 16> ?>
// EXPECT: static extents disagree for a dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Hidden);
int main() {
  auto y = dt::zeros<float>(Hidden::fixed<8>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto x = dt::ones<float>(Hidden::fixed<16>{});
#else
  auto x = dt::ones<float>(Hidden::fixed<8>{});
#endif
  y.assign(x * 2.0f);
}
