// A partial sum kept in a plain tensor, as if it were the batch's sum.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: partial_value_used<dimtensor::call::tensor, Batch, Data>
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_AXIS(Data);

void step(dist::communicator const& comm) {
  auto const x = dist::shard<Batch, Data>(dt::ones<float>(Batch(8), Hidden(2)), comm);
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<float, Hidden> const total = dt::sum<Batch>(x);  // the mistake
#else
  dt::tensor<float, Hidden> const total = dist::all_reduce(dt::sum<Batch>(x), comm);  // the fix
#endif
  (void)total;
}

int main() { dist::run_threads(2, step); }
