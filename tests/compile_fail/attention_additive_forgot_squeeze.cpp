// Additive attention written by hand without d2l's .squeeze(-1): w_v maps
// Hidden to a Score dim of extent 1, which stays in the scores
// [Batch, Queries, KVPairs, Score].  The softmax over KVPairs accepts them,
// but bmm with the values needs rank 3 and says what it got.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: bmm_needs_rank_3<dimtensor::diagnostic::left_has<dimtensor::dims<Batch, Queries, KVPairs, dimtensor::nn::Score> ?>, dimtensor::diagnostic::right_has<dimtensor::dims<Batch, KVPairs, ValueFeat> ?> ?>
// EXPECT: bmm needs two rank-3 operands
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);

int main() {
  dt::nn::linear<KeyFeat, Hidden> const W_k(KeyFeat(2), Hidden(8), false);
  dt::nn::linear<QueryFeat, Hidden> const W_q(QueryFeat(20), Hidden(8), false);
  dt::nn::linear<Hidden, dt::nn::Score> const w_v(Hidden(8), dt::nn::Score(1), false);
  auto const queries = dt::randn<float>(Batch(2), Queries(1), QueryFeat(20));
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
  auto const values = dt::ones<float>(Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  auto const features = dt::tanh(dt::unsqueeze<KVPairs, 2>(W_q(queries)) + dt::unsqueeze<Queries, 1>(W_k(keys)));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const scores = w_v(features);  // the mistake
#else
  auto const scores = dt::squeeze<dt::nn::Score>(w_v(features));  // the fix
#endif
  auto const weights = dt::masked_softmax<KVPairs>(scores, valid_lens);
  auto const out = dt::bmm(weights, values);
  (void)out;
}
