// char is not an element type.
#include <dimtensor/dimtensor.hpp>
// EXPECT: tensor element type must be float, double, std::int32_t, std::int64_t or bool
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<char, Batch> t;
#else
  dt::tensor<std::int32_t, Batch> t;
#endif
  (void)t;
}
