// lengths<Measured, Dims...> with something other than a dim tag first
// (the element type, as for tensor<T, Dims...>): the measured dim comes first.
#include <dimtensor/dimtensor.hpp>
// EXPECT: lengths<Measured, Dims...> needs a dimension tag Measured
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(KVPairs);

int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::lengths<std::int64_t, Batch> const lens{2, 6};  // the mistake
#else
  dt::lengths<KVPairs, Batch> const lens{2, 6};  // the fix
#endif
  (void)lens;
}
