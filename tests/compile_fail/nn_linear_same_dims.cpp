// A square layer, linear<Hidden, Hidden> (d2l's W_o), is valid: its weight
// is [Hidden, prime<Hidden>] (PyTorch's [out, in], the input dim printed
// Hidden').  Reading that weight in a hand-written loop with Hidden for both
// indices names one dim twice; the input index is prime<Hidden>.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/linear.hpp>
// EXPECT: duplicate_dimension<Hidden, dimtensor::dims<Hidden, Hidden> ?>
// EXPECT: duplicate dimension in a shape. each dim may appear only once
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
int main() {
  auto const x = dt::ones<float>(Batch(2), Hidden(8));
  dt::nn::linear<Hidden, Hidden> const W_o(Hidden(8), Hidden(8), false);
  dt::tensor<float, Batch, Hidden> const y = W_o(x);
  double acc = 0;  // y(Batch(0), Hidden(0)) by hand
  for (dt::index_t i = 0; i < 8; ++i) {
#ifdef DIMTENSOR_COMPILE_FAIL
    acc += W_o.weight(Hidden(0), Hidden(i)) * x(Batch(0), Hidden(i));  // the mistake
#else
    acc += W_o.weight(Hidden(0), dt::prime<Hidden>(i)) * x(Batch(0), Hidden(i));  // the fix
#endif
  }
  (void)y;
  (void)acc;
}
