// where() needs a bool condition, not a float tensor.
#include <dimtensor/dimtensor.hpp>
// EXPECT: where\(cond, a, b\): cond must hold bool
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main() {
  auto x = dt::arange<float>(Batch(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto y = dt::eval(dt::where(x, x, 0.0f));
#else
  auto y = dt::eval(dt::where(x > 1.0f, x, 0.0f));
#endif
  (void)y;
}
