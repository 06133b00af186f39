// valid_lengths counts the true elements of a mask; given the tokens
// themselves (d2l's `(array != pad).sum(1)` without the comparison) it is a
// compile error naming the element type.
#include <dimtensor/dimtensor.hpp>
// EXPECT: mask_not_bool<dimtensor::call::valid_lengths, long ?(int)?>
// EXPECT: valid_lengths counts the true elements of a bool mask
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);

int main() {
  dt::tensor<std::int64_t, Batch, Steps> const tokens{{5, 4, 3, 1}, {6, 1, 1, 1}};
  std::int64_t const pad = 1;
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const lens = dt::valid_lengths<Steps>(tokens);  // the mistake
#else
  auto const lens = dt::valid_lengths<Steps>(dt::ne(tokens, pad));  // the fix
#endif
  (void)pad;
  (void)lens;
}
