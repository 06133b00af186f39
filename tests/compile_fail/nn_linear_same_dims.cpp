// linear<Hidden, Hidden> (d2l's W_o): the weight [Out, In] would name Hidden twice.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/linear.hpp>
// EXPECT: linear<In, Out> needs two different dims
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(OutFeat);
int main() {
  auto const x = dt::ones<float>(Batch(2), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::nn::linear<Hidden, Hidden> const W_o(Hidden(8), Hidden(8), false);  // the mistake
  auto const y = W_o(x);
#else
  dt::nn::linear<Hidden, OutFeat> const W_o(Hidden(8), OutFeat(8), false);  // the fix
  auto const y = dt::rename<OutFeat, Hidden>(W_o(x));
#endif
  (void)y;
}
