// A type that is not a dimension tag in a tensor type.
#include <dimtensor/dimtensor.hpp>
// EXPECT: every dim of a tensor must be a tag declared with DIMTENSOR_DIM
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<float, int> t;
#else
  dt::tensor<float, Batch> t;
#endif
  (void)t;
}
