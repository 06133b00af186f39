// Dot-product attention given double queries and float keys (queries from
// a double computation, keys from a float model).  Nothing is converted
// silently: the module of element type float names the double operand.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: element_types_differ<dimtensor::call::dot_product_attention, double, float ?>
// EXPECT: the operands have different element types. convert one explicitly
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);

int main() {
  auto const queries = dt::randn<double>(Batch(2), Queries(1), Hidden(2));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), Hidden(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention(0.5);
  attention.eval();
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = attention(queries, keys, values, valid_lens);  // the mistake
#else
  auto const out = attention(dt::cast<float>(queries), keys, values, valid_lens);  // the fix
#endif
  (void)out;
}
