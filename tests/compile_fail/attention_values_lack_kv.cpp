// Values of the wrong sequence: the weights sum over KVPairs, so the values
// must have one row per key-value pair.  Passing the queries' sequence
// (e.g. the decoder's states [Batch, Queries, ValueFeat]) as the values is
// caught by the module, naming the values and their dims.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::dot_product_attention, dimtensor::operand::values, KVPairs, dimtensor::dims<Batch, Queries, ValueFeat> ?>
// EXPECT: an attention operand lacks a dim that the module names
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), Hidden(2));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden(2));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const values = dt::ones<float>(Batch(2), Queries(1), ValueFeat(4));  // the mistake
#else
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));  // the fix
#endif
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention(0.5);
  attention.eval();
  auto const out = attention(queries, keys, values, valid_lens);
  (void)out;
}
