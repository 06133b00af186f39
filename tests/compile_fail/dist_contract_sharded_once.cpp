// Contracting over Batch a tensor cut over the data axis with a whole one:
// rank r's rows against all rows.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: sharded_differently<dimtensor::call::contract, Batch, dimtensor::diagnostic::left_axis<Data>, dimtensor::diagnostic::right_axis<dimtensor::diagnostic::not_sharded> >
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_AXIS(Data);

void step(dist::communicator const& comm) {
  auto const x = dist::shard<Batch, Data>(dt::ones<float>(Batch(8), Hidden(2)), comm);
  auto const weights = dt::ones<float>(Batch(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const weighted = dt::contract<Batch>(x, weights);  // the mistake
#else
  auto const weighted = dt::contract<Batch>(x, dist::shard<Batch, Data>(weights, comm));  // the fix
#endif
  (void)dist::all_reduce(weighted, comm);
}

int main() { dist::run_threads(2, step); }
