// concat along Batch of tensors whose static Hidden extents differ (8 vs 16).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
// EXPECT: extent_mismatch<dimtensor::call::concat, Hidden, dimtensor::diagnostic::extents<8, 16> ?>
// EXPECT: static extents disagree for a dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const a = dt::ones<float>(Batch(2), Hidden::fixed<8>{});
  auto const b = dt::ones<float>(Batch(3), Hidden::fixed<16>{});
  auto const b8 = dt::ones<float>(Batch(3), Hidden::fixed<8>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const c = dt::concat<Batch>(a, b);
#else
  auto const c = dt::concat<Batch>(a, b8);
#endif
  (void)b;
  (void)b8;
  (void)c;
}
