// Additive attention written by hand with the layers crossed: W_q (built for
// the queries' QueryFeat) applied to the keys, whose features are KeyFeat.
// In PyTorch this runs whenever query_size == key_size; here the layer
// names its input dim and the keys lack it.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: linear_input_lacks_dim<QueryFeat, Hidden, dimtensor::dims<Batch, KVPairs, KeyFeat> ?>
// EXPECT: linear<In, Out> applied to a tensor without its input dim In
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);

struct additive_attention {
  dt::nn::linear<KeyFeat, Hidden> W_k{KeyFeat(4), Hidden(8), false};
  dt::nn::linear<QueryFeat, Hidden> W_q{QueryFeat(4), Hidden(8), false};
  dt::nn::linear<Hidden, dt::nn::Score> w_v{Hidden(8), dt::nn::Score(1), false};

  template <class Q, class K, class V, class L>
  auto operator()(Q const& queries, K const& keys, V const& values, L const& valid_lens) {
#ifdef DIMTENSOR_COMPILE_FAIL
    auto const q = W_q(queries);
    auto const k = W_q(keys);  // the mistake
#else
    auto const q = W_q(queries);
    auto const k = W_k(keys);  // the fix
#endif
    auto const features = dt::tanh(dt::unsqueeze<KVPairs, 2>(q) + dt::unsqueeze<Queries, 1>(k));
    auto const scores = dt::squeeze<dt::nn::Score>(w_v(features));
    return dt::bmm(dt::masked_softmax<KVPairs>(scores, valid_lens), values);
  }
};

int main() {
  auto const queries = dt::randn<float>(Batch(2), Queries(1), QueryFeat(4));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(4));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  additive_attention attention;
  auto const out = attention(queries, keys, values, valid_lens);
  (void)out;
}
