// load_npy<T> needs the tensor type to load into, dims included.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
// EXPECT: dimtensor::load_npy<Tensor>: Tensor must be a tensor type
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main(int argc, char**) {
  if (argc > 1) {
#ifdef DIMTENSOR_COMPILE_FAIL
    auto const x = dt::load_npy<float>("x.npy");
#else
    auto const x = dt::load_npy<dt::tensor<float, Batch>>("x.npy");
#endif
    (void)x;
  }
}
