// d2l's transpose_qkv with the batch and hidden dims swapped in the
// template arguments: both are dims of X, so only their order tells; the
// diagnosis names the call, both dims and X's dims (without it the first
// error came later, naming BatchHeads and Queries).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: transpose_qkv_batch_after_hidden<dimtensor::call::transpose_qkv, Hidden, Batch, dimtensor::dims<Batch, Queries, Hidden> ?>
// EXPECT: are the template arguments swapped
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);

int main() {
  auto const X = dt::randn<float>(Batch(2), Queries(4), Hidden(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const per_head = dt::nn::transpose_qkv<Hidden, Batch>(X, 2);  // the mistake
#else
  auto const per_head = dt::nn::transpose_qkv<Batch, Hidden>(X, 2);  // the fix
#endif
  (void)per_head;
}
