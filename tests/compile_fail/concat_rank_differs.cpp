// concat of a tensor with one that lacks a dim: the first operand's Embed has no partner.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/unsqueeze.hpp>
// EXPECT: dims_differ<dimtensor::call::concat, dimtensor::diagnostic::operand<2>, dimtensor::diagnostic::at_position<1>, dimtensor::diagnostic::expected<Embed>, dimtensor::diagnostic::found<dimtensor::diagnostic::no_dimension> ?>
// EXPECT: the operands must have the same dims in the same order
namespace dt = dimtensor;
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Embed);
int main() {
  auto const a = dt::ones<float>(Steps(3), Embed(1));
  auto const b = dt::ones<float>(Steps(5));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const c = dt::concat<Steps>(a, a, b);
#else
  auto const c = dt::concat<Steps>(a, a, dt::unsqueeze<Embed, 1>(b));
#endif
  (void)c;
}
