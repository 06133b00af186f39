// repeat_interleave into a dim name the tensor already has.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/repeat_interleave.hpp>
// EXPECT: already_a_dimension_of<dimtensor::call::repeat_interleave, Queries, dimtensor::dims<Batch, Queries> ?>
// EXPECT: the new dimension is already a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(BatchHeads);
int main() {
  auto const valid_lens = dt::ones<int>(Batch(2), Queries(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const r = dt::repeat_interleave<Batch, Queries>(valid_lens, 3);
#else
  auto const r = dt::repeat_interleave<Batch, BatchHeads>(valid_lens, 3);
#endif
  (void)r;
}
