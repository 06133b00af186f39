// The loss summed over a batch cut over the data axis, read on one rank:
// it is that rank's part of the sum, not the batch's loss.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: partial_value_used<dimtensor::call::read, Batch, Data>
// EXPECT: the value is this rank's part of a reduction over a dim sharded over a mesh axis
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_AXIS(Data);

void step(dist::communicator const& comm) {
  auto const losses = dist::shard<Batch, Data>(dt::ones<float>(Batch(8)), comm);
  auto const loss = dt::sum<Batch>(losses);
#ifdef DIMTENSOR_COMPILE_FAIL
  float const total = loss.item();  // the mistake
#else
  float const total = dist::all_reduce(loss, comm).item();  // the fix
#endif
  (void)total;
}

int main() { dist::run_threads(2, step); }
