// The decoder's self-attention masked with valid lengths per source step
// ([Batch, EncSteps]) instead of its causal lengths per target step
// ([Batch, DecSteps]: query t sees steps 0..t).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/transformer.hpp>
// EXPECT: valid_lens_not_a_leading_part<dimtensor::call::masked_softmax, dimtensor::dims<Batch, EncSteps>, dimtensor::dims<Batch, DecSteps, dimtensor::nn::Heads> ?>
namespace dt = dimtensor;
namespace nn = dimtensor::nn;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);
using encoder_t = nn::transformer_encoder<Batch, EncSteps, Vocab, Hidden, FFN>;
using decoder_t = nn::transformer_decoder<Batch, DecSteps, EncSteps, Vocab, Hidden, FFN>;
int main() {
  nn::multi_head_attention<DecSteps, nn::SelfKeys, Hidden> attention1(Hidden(8), Hidden(8), Hidden(8), Hidden(8), 2);
  auto const x = dt::ones<float>(Batch(2), DecSteps(3), Hidden(8));
  auto const keys = dt::rename<DecSteps, nn::SelfKeys>(x);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const lens = dt::ones<std::int64_t>(Batch(2), EncSteps(3));  // the mistake
#else
  dt::tensor<std::int64_t, Batch, DecSteps> const lens{{1, 2, 3}, {1, 2, 3}};  // the fix
#endif
  auto const y = attention1(x, keys, keys, lens);
  (void)y;
}
