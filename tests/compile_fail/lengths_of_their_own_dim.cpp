// Lengths along KVPairs that have KVPairs among their own dims: one length
// of KVPairs per position of KVPairs means nothing; per-query lengths are
// lengths<KVPairs, Batch, Queries>.
#include <dimtensor/dimtensor.hpp>
// EXPECT: lengths along a dim cannot have that dim themselves
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);

int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::lengths<KVPairs, Batch, KVPairs> const lens{{1, 3}, {2, 4}};  // the mistake
#else
  dt::lengths<KVPairs, Batch, Queries> const lens{{1, 3}, {2, 4}};  // the fix
#endif
  (void)lens;
}
