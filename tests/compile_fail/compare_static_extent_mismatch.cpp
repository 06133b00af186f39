// max_abs_diff of tensors whose static extents differ: they can never match.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/compare.hpp>
// EXPECT: extent_mismatch<dimtensor::call::max_abs_diff, Hidden, dimtensor::diagnostic::extents<8, 16> ?>
// EXPECT: static extents disagree for a dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const a = dt::zeros<float>(Batch(2), Hidden::fixed<8>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const b = dt::zeros<float>(Batch(2), Hidden::fixed<16>{});
#else
  auto const b = dt::zeros<float>(Batch(2), Hidden::fixed<8>{});
#endif
  return dt::max_abs_diff(a, b) == 0 ? 0 : 1;
}
