// rename to a name the tensor already uses for another dim.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/rename.hpp>
// EXPECT: already_a_dimension_of<dimtensor::call::rename, Queries, dimtensor::dims<Batch, Queries, Hidden> ?>
// EXPECT: the new dimension is already a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Score);
int main() {
  auto const x = dt::ones<float>(Batch(2), Queries(4), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::rename<Hidden, Queries>(x);
#else
  auto const y = dt::rename<Hidden, Score>(x);
#endif
  (void)y;
}
