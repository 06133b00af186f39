// Positional encoding declared over the steps and the wrong feature dim (the
// FFN's hidden units instead of the model's): its rows would be added along
// another axis.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/transformer.hpp>
// EXPECT: positions_not_in_tensor<dimtensor::call::positional_encoding, EncSteps, FFN, dimtensor::dims<Batch, EncSteps, Hidden> ?>
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
  auto const x = dt::ones<float>(Batch(4), EncSteps(10), Hidden(32));
#ifdef DIMTENSOR_COMPILE_FAIL
  nn::positional_encoding<EncSteps, FFN> pos_encoding(FFN(32), 0.1);  // the mistake
#else
  nn::positional_encoding<EncSteps, Hidden> pos_encoding(Hidden(32), 0.1);  // the fix
#endif
  auto const y = pos_encoding(x);
  (void)y;
}
