// d2l's torch.cat((context, x), dim=-1) with the two feature dims named in
// the wrong order: the context has Hidden, the embedded token Embed.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::rename, Embed, dimtensor::dims<Batch, Hidden> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(DecIn);
int main() {
  auto const context = dt::ones<float>(Batch(4), Hidden(16));
  auto const x = dt::ones<float>(Batch(4), Embed(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const in = dt::concat_as<DecIn, Embed, Hidden>(context, x);  // the mistake
#else
  auto const in = dt::concat_as<DecIn, Hidden, Embed>(context, x);  // the fix
#endif
  (void)in;
}
