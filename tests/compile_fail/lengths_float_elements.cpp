// Valid lengths of floats: lengths count positions, so they hold int32 or
// int64 (as masked_softmax's untyped valid_lens must).
#include <dimtensor/dimtensor.hpp>
// EXPECT: lengths hold std::int32_t or std::int64_t elements
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(KVPairs);

int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::basic_lengths<KVPairs, dt::cpu, float, Batch> const lens{2.0f, 6.0f};  // the mistake
#else
  dt::basic_lengths<KVPairs, dt::cpu, std::int32_t, Batch> const lens{2, 6};  // the fix
#endif
  (void)lens;
}
