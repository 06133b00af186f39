// valid_lens holding floats (torch.tensor([2., 6.]) is easy to write):
// lengths are counts, int32 or int64.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: valid_lens_not_integral<dimtensor::call::masked_softmax, float ?>
// EXPECT: valid_lens must hold std::int32_t or std::int64_t elements
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), QueryFeat(20));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const valid_lens = dt::tensor<float, Batch>{2, 6};  // the mistake
#else
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};  // the fix
#endif
  dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden> attention(KeyFeat(2), QueryFeat(20),
                                                                                     Hidden(8), 0.1);
  attention.eval();
  auto const out = attention(queries, keys, values, valid_lens);
  (void)out;
}
