// A linear layer on the CPU backend applied to a Thrust tensor: a module's
// backend is a template argument; its inputs must live there.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/backends/thrust.hpp>
// EXPECT: backends_differ
// EXPECT: the operands live on different backends
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);
int main() {
  auto const x = dt::to<dt::thrust_cpp>(dt::ones<float>(Batch(2), In(3)));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::nn::linear<In, Out> layer(In(3), Out(4));
#else
  dt::nn::linear<In, Out, float, dt::thrust_cpp> layer(In(3), Out(4));
#endif
  auto const y = layer(x);
  (void)y;
}
