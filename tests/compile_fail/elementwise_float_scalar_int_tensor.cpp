// A floating-point scalar with an integer tensor would truncate silently.
#include <dimtensor/dimtensor.hpp>
// EXPECT: a floating-point scalar with an integer tensor. cast the tensor first
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main() {
  auto a = dt::arange<std::int32_t>(Batch(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto c = dt::eval(a * 0.5);
#else
  auto c = dt::eval(dt::cast<float>(a) * 0.5);
#endif
  (void)c;
}
