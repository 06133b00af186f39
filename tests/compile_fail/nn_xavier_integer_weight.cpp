// xavier_uniform_ on an integer matrix: its uniform draws need a float weight.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/init.hpp>
// EXPECT: nn::xavier_uniform_ needs a float weight
namespace dt = dimtensor;
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);
int main() {
  dt::generator gen(0);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto w = dt::zeros<int>(Out(3), In(4));  // the mistake
#else
  auto w = dt::zeros<float>(Out(3), In(4));  // the fix
#endif
  dt::nn::xavier_uniform_(w, gen);
}
