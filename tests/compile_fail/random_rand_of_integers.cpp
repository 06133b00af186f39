// rand<int>: uniform [0, 1) has no integer values; randint draws integers.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/random.hpp>
// EXPECT: dimtensor::rand<T>: T must be float or double .see randint for integers.
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
int main() {
  dt::generator gen(0);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const tokens = dt::rand<int>(gen, Batch(8));
#else
  auto const tokens = dt::randint<int>(gen, 0, 100, Batch(8));
#endif
  return static_cast<int>(tokens.size()) == 8 ? 0 : 1;
}
