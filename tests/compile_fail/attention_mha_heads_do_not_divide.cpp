// Multi-head attention whose head count does not divide the hidden size,
// both given statically: 3 heads cannot split Hidden = 100.  (Given as
// run-time extents, the same mistake is a value_error.)
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: heads_do_not_divide<dimtensor::call::multi_head_attention, Hidden, 100, 3 ?>
// EXPECT: the number of heads must divide the hidden size
namespace dt = dimtensor;
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(100), Hidden(100), Hidden(100),
                                                                   Hidden::fixed<100>{}, dt::nn::Heads::fixed<3>{},
                                                                   0.5);  // the mistake
#else
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(100), Hidden(100), Hidden(100),
                                                                   Hidden::fixed<100>{}, dt::nn::Heads::fixed<5>{},
                                                                   0.5);  // the fix
#endif
  (void)attention.num_heads();
}
