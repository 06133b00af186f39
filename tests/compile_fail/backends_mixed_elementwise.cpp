// A tensor on the CPU backend added to one on Thrust's C++ system: nothing
// moves implicitly between backends; the fix moves one with to<Backend>.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/backends/thrust.hpp>
// EXPECT: backends_differ
// EXPECT: the operands live on different backends. move one explicitly with dimtensor::to<Backend>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const x = dt::ones<float>(Batch(2), Hidden(4));
  auto const y = dt::to<dt::thrust_cpp>(dt::ones<float>(Batch(2), Hidden(4)));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<float, Batch, Hidden> const sum = x + y;
#else
  dt::tensor<float, Batch, Hidden> const sum = x + dt::to<dt::cpu>(y);
#endif
  (void)sum;
}
