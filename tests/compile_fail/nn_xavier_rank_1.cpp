// xavier_uniform_ on a bias (rank 1): fan_in and fan_out need a [Out, In] weight.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/init.hpp>
// EXPECT: nn::xavier_uniform_ takes a weight of rank 2
namespace dt = dimtensor;
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);
int main() {
  dt::nn::linear<In, Out> layer(In(4), Out(3));
  dt::generator gen(0);
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::nn::xavier_uniform_(layer.bias, gen);  // the mistake
#else
  dt::nn::xavier_uniform_(layer.weight, gen);  // the fix
#endif
}
