// d2l's transpose_qkv(self.W_q(queries), num_heads) with the projection
// forgotten: the raw queries' features are QueryFeat, not the hidden dim
// that transpose_qkv splits into heads.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: not_a_dimension_of<dimtensor::call::transpose_qkv, Hidden, dimtensor::dims<Batch, Queries, QueryFeat> ?>
// EXPECT: the named dimension is not a dimension of the tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(Hidden);

int main() {
  dt::nn::linear<QueryFeat, Hidden> const W_q(QueryFeat(20), Hidden(100), false);
  auto const queries = dt::randn<float>(Batch(2), Queries(4), QueryFeat(20));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const q = dt::nn::transpose_qkv<Batch, Hidden>(queries, dt::nn::Heads(5));  // the mistake
#else
  auto const q = dt::nn::transpose_qkv<Batch, Hidden>(W_q(queries), dt::nn::Heads(5));  // the fix
#endif
  dt::tensor<float, dt::nn::BatchHeads, Queries, dt::nn::HeadFeat> const heads = q;
  (void)heads;
}
