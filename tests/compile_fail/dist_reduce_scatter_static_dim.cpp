// Scattering along a dim whose extent is in the type: each rank's part has
// another extent.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: collective_along_static_dim<dimtensor::call::reduce_scatter, Hidden
// EXPECT: change the extent of D, so D's extent cannot be static
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);

void step(dist::communicator const& comm) {
  auto const x = dt::ones<float>(Batch(4), Hidden::fixed<4>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const mine = dist::reduce_scatter<Hidden>(x, comm);  // the mistake
#else
  auto const mine = dist::reduce_scatter<Batch>(x, comm);  // the fix
#endif
  (void)mine;
}

int main() { dist::run_threads(2, step); }
