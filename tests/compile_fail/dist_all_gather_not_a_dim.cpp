// Gathering along a dim the tensor does not have.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::all_gather, Queries, dimtensor::dims<Batch, Hidden> >
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);

void step(dist::communicator const& comm) {
  auto const x = dt::ones<float>(Batch(2), Hidden(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const all = dist::all_gather<Queries>(x, comm);  // the mistake
#else
  auto const all = dist::all_gather<Batch>(x, comm);  // the fix
#endif
  (void)all;
}

int main() { dist::run_threads(2, step); }
