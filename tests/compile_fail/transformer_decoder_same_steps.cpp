// A Transformer decoder whose target steps and source steps are one dim:
// its cross-attention could no longer tell the decoder's steps from the
// encoder's (d2l's code takes both as axis 1).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/transformer.hpp>
// EXPECT: transformer_decoder needs the target steps and the source steps to be different dims
namespace dt = dimtensor;
namespace nn = dimtensor::nn;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);
int main() {
  dt::generator gen(0);
#ifdef DIMTENSOR_COMPILE_FAIL
  nn::transformer_decoder<Batch, Steps, Steps, Vocab, Hidden, FFN> decoder(  // the mistake
#else
  nn::transformer_decoder<Batch, DecSteps, Steps, Vocab, Hidden, FFN> decoder(  // the fix
#endif
      Vocab(10), Hidden(8), FFN(16), 2, 1, 0.0, gen);
  (void)decoder;
}
