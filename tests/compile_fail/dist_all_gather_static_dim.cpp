// Gathering along a dim whose extent is in the type: the gathered extent
// (the sum of the ranks') cannot be.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: collective_along_static_dim<dimtensor::call::all_gather, Hidden
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);

void step(dist::communicator const& comm) {
  auto const x = dt::ones<float>(Batch(2), Hidden::fixed<4>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const all = dist::all_gather<Hidden>(x, comm);  // the mistake
#else
  auto const all = dist::all_gather<Batch>(x, comm);  // the fix
#endif
  (void)all;
}

int main() { dist::run_threads(2, step); }
