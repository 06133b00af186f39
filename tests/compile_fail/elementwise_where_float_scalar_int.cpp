// where() with an integer tensor and a floating-point scalar would truncate it.
#include <dimtensor/dimtensor.hpp>
// EXPECT: a floating-point scalar with an integer tensor. cast the tensor first
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main() {
  auto x = dt::arange<std::int32_t>(Batch(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto y = dt::eval(dt::where(x > 1, x, 0.5));
#else
  auto y = dt::eval(dt::where(x > 1, x, 0));
#endif
  (void)y;
}
