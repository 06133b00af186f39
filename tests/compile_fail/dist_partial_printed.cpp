// A mean over a sharded batch printed: each rank would print its own part.
#include <iostream>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: partial_value_used<dimtensor::call::print, Batch, Data>
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_AXIS(Data);

void step(dist::communicator const& comm) {
  auto const x = dist::shard<Batch, Data>(dt::ones<float>(Batch(8), Hidden(2)), comm);
  auto const m = dt::mean<Batch>(x);
#ifdef DIMTENSOR_COMPILE_FAIL
  std::cout << m << '\n';  // the mistake
#else
  std::cout << dist::all_reduce(m, comm) << '\n';  // the fix
#endif
}

int main() { dist::run_threads(2, step); }
