// A float linear applied to a double tensor.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/linear.hpp>
// EXPECT: element_types_differ<dimtensor::call::linear, double, float ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);
int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::nn::linear<Feat, Hidden> const proj(Feat(4), Hidden(8));  // the mistake
#else
  dt::nn::linear<Feat, Hidden, double> const proj(Feat(4), Hidden(8));  // the fix
#endif
  auto const x = dt::ones<double>(Batch(2), Feat(4));
  auto const y = proj(x);
  (void)y;
}
