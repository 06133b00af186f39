// Additive attention written by hand, as d2l's AdditiveAttention.forward:
// queries.unsqueeze(2) + keys.unsqueeze(1).  Putting the queries' new
// KVPairs at position 1 (d2l's unsqueeze(1), copied from the keys' line)
// makes the + see KVPairs where the keys have Queries: the diagnostic names
// both dims and the position.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: operands_disagree<dimtensor::call::plus, dimtensor::diagnostic::at_position<1>, dimtensor::diagnostic::left_has<KVPairs>, dimtensor::diagnostic::right_has<Queries> ?>
// EXPECT: the operands' dims, aligned from the right, must be the same dimension at every position
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);

struct additive_attention {
  dt::nn::linear<KeyFeat, Hidden> W_k{KeyFeat(2), Hidden(8), false};
  dt::nn::linear<QueryFeat, Hidden> W_q{QueryFeat(20), Hidden(8), false};
  dt::nn::linear<Hidden, dt::nn::Score> w_v{Hidden(8), dt::nn::Score(1), false};

  template <class Q, class K, class V, class L>
  auto operator()(Q const& queries, K const& keys, V const& values, L const& valid_lens) {
    auto const q = W_q(queries);  // [Batch, Queries, Hidden]
    auto const k = W_k(keys);     // [Batch, KVPairs, Hidden]
#ifdef DIMTENSOR_COMPILE_FAIL
    auto const features = dt::tanh(dt::unsqueeze<KVPairs, 1>(q) + dt::unsqueeze<Queries, 1>(k));  // the mistake
#else
    auto const features = dt::tanh(dt::unsqueeze<KVPairs, 2>(q) + dt::unsqueeze<Queries, 1>(k));  // the fix
#endif
    auto const scores = dt::squeeze<dt::nn::Score>(w_v(features));
    return dt::bmm(dt::masked_softmax<KVPairs>(scores, valid_lens), values);
  }
};

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), QueryFeat(20));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  additive_attention attention;
  auto const out = attention(queries, keys, values, valid_lens);
  (void)out;
}
