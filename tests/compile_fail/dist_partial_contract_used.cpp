// The gradient-like product Xᵀ·G over a sharded batch used directly: each
// rank holds its rows' share of the sum over Batch.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: partial_value_used<dimtensor::call::operand, Batch, Data>
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);
DIMTENSOR_AXIS(Data);

void step(dist::communicator const& comm) {
  auto const x = dist::shard<Batch, Data>(dt::ones<float>(Batch(8), In(3)), comm);
  auto const g = dist::shard<Batch, Data>(dt::ones<float>(Batch(8), Out(2)), comm);
  auto const xg = dt::contract<Batch>(x, g);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const scaled = xg * 0.5f;  // the mistake
#else
  auto const scaled = dist::all_reduce(xg, comm) * 0.5f;  // the fix
#endif
  (void)scaled;
}

int main() { dist::run_threads(2, step); }
