// concat of tensors whose dims are in another order: names, not positions, decide.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/transpose.hpp>
// EXPECT: dims_differ<dimtensor::call::concat, dimtensor::diagnostic::operand<1>, dimtensor::diagnostic::at_position<1>, dimtensor::diagnostic::expected<Steps>, dimtensor::diagnostic::found<Embed> ?>
// EXPECT: the operands must have the same dims in the same order
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Embed);
int main() {
  auto const a = dt::ones<float>(Batch(2), Steps(3), Embed(4));
  auto const b = dt::ones<float>(Batch(2), Embed(4), Steps(5));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const c = dt::concat<Steps>(a, b);
#else
  auto const c = dt::concat<Steps>(a, dt::transpose<Embed, Steps>(b));
#endif
  (void)c;
}
