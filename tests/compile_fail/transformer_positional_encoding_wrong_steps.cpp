// The decoder's positional encoding added to the encoder's embedded source:
// in PyTorch both are (batch, num_steps, num_hiddens).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/transformer.hpp>
// EXPECT: positions_not_in_tensor<dimtensor::call::positional_encoding, DecSteps, Hidden, dimtensor::dims<Batch, EncSteps, Hidden> ?>
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
  nn::positional_encoding<DecSteps, Hidden> pos_encoding(Hidden(32), 0.1);
  auto const source = dt::ones<float>(Batch(4), EncSteps(10), Hidden(32));
  auto const target = dt::ones<float>(Batch(4), DecSteps(10), Hidden(32));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const x = pos_encoding(source);  // the mistake
  (void)target;
#else
  auto const x = pos_encoding(target);  // the fix
  (void)source;
#endif
  (void)x;
}
