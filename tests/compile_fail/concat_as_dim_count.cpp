// concat_as names one dim per operand; here one name for two operands.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
// EXPECT: concat_as<Into, D0, D1, \.\.\.>\(x0, x1, \.\.\.\) names one dim per operand
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(DecIn);
int main() {
  auto const context = dt::ones<float>(Batch(4), Hidden(16));
  auto const x = dt::ones<float>(Batch(4), Embed(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const in = dt::concat_as<DecIn, Hidden>(context, x);  // the mistake
#else
  auto const in = dt::concat_as<DecIn, Hidden, Embed>(context, x);  // the fix
#endif
  (void)in;
}
