// d2l's W_q(keys): W_q maps QueryFeat to Hidden, but keys have KeyFeat.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/linear.hpp>
// EXPECT: linear_input_lacks_dim<QueryFeat, Hidden, dimtensor::dims<Batch, KVPairs, KeyFeat> ?>
// EXPECT: linear<In, Out> applied to a tensor without its input dim In
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(Hidden);
int main() {
  dt::nn::linear<QueryFeat, Hidden> const W_q(QueryFeat(20), Hidden(8), false);
  dt::nn::linear<KeyFeat, Hidden> const W_k(KeyFeat(2), Hidden(8), false);
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const k = W_q(keys);  // the mistake
#else
  auto const k = W_k(keys);  // the fix
#endif
  (void)k;
}
