// concat of float and double tensors: convert one explicitly.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
// EXPECT: element_types_differ<dimtensor::call::concat, float, double ?>
// EXPECT: the operands have different element types
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Embed);
int main() {
  auto const a = dt::ones<float>(Batch(2), Embed(4));
  auto const b = dt::ones<double>(Batch(3), Embed(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const c = dt::concat<Batch>(a, b);
#else
  auto const c = dt::concat<Batch>(a, dt::cast<float>(b));
#endif
  (void)c;
}
