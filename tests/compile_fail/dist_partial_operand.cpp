// A feature mean over a sharded batch fed to the next operation before the
// all-reduce: normalizing with one rank's mean.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: partial_value_used<dimtensor::call::operand, Batch, Data>
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_AXIS(Data);

void step(dist::communicator const& comm) {
  auto const x = dist::shard<Batch, Data>(dt::ones<float>(Batch(8), Hidden(2)), comm);
  auto const m = dt::mean<Batch>(x);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const centered = x - dt::unsqueeze<Batch, 0>(m);  // the mistake
#else
  auto const centered = x - dt::unsqueeze<Batch, 0>(dist::all_reduce(m, comm));  // the fix
#endif
  (void)centered;
}

int main() { dist::run_threads(2, step); }
