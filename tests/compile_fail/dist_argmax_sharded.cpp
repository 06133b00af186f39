// The index of the largest row of a sharded batch: each rank's index is in
// its own rows, and no all-reduce makes it the batch's.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: reduction_over_sharded_dim<dimtensor::call::argmax, Batch, Data>
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_AXIS(Data);

void step(dist::communicator const& comm) {
  auto const x = dist::shard<Batch, Data>(dt::ones<float>(Batch(8), Hidden(2)), comm);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const best = dt::argmax<Batch>(x);  // the mistake
#else
  auto const best = dt::argmax<Batch>(dist::all_gather<Batch>(x, comm));  // the fix
#endif
  (void)best;
}

int main() { dist::run_threads(2, step); }
