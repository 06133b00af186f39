// Assigning an expression of dims [Batch, Hidden] to a tensor of [Hidden, Batch].
#include <dimtensor/dimtensor.hpp>
// EXPECT: assigned_dims_differ<dimtensor::call::tensor, dimtensor::dims<Hidden, Batch>, dimtensor::dims<Batch, Hidden> ?>
// EXPECT: a tensor holds only an expression of its own dims in the same order
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
int main() {
  auto x = dt::ones<float>(Batch(2), Hidden(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<float, Hidden, Batch> y = x * 2.0f;
#else
  dt::tensor<float, Batch, Hidden> y = x * 2.0f;
#endif
  (void)y;
}
