// A batch cut over the data axis added to a whole batch: rank r holds rows
// of the first and all rows of the second, so the elements do not line up.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: sharded_differently<dimtensor::call::plus, Batch, dimtensor::diagnostic::left_axis<Data>, dimtensor::diagnostic::right_axis<dimtensor::diagnostic::not_sharded> >
// EXPECT: the operands cut the dimension over different mesh axes, or one is cut and the other whole
namespace dt = dimtensor;
namespace dist = dimtensor::dist;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_AXIS(Data);

void step(dist::communicator const& comm) {
  auto const x = dt::ones<float>(Batch(8), Hidden(4));
  auto const bias = dt::ones<float>(Batch(8), Hidden(4));
  auto const mine = dist::shard<Batch, Data>(x, comm);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = mine + bias;  // the mistake
#else
  auto const y = mine + dist::shard<Batch, Data>(bias, comm);  // the fix
#endif
  (void)y;
}

int main() { dist::run_threads(2, step); }
