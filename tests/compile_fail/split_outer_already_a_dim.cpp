// split whose new outer dim is a name the tensor already has.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/split.hpp>
// EXPECT: already_a_dimension_of<dimtensor::call::split, Queries, dimtensor::dims<Batch, Queries, Hidden> ?>
// EXPECT: the new dimension is already a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
int main() {
  auto const x = dt::ones<float>(Batch(2), Queries(4), Hidden(6));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::split<Hidden, Queries, HeadFeat>(x, Queries(3));
#else
  auto const y = dt::split<Hidden, Heads, HeadFeat>(x, Heads(3));
#endif
  (void)y;
}
