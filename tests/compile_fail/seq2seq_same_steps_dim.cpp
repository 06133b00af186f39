// One dim for the source and the target steps: attention over the wrong
// steps could then no longer be caught.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: seq2seq_attention_decoder needs the target steps and the source steps to be different
namespace dt = dimtensor;
namespace nn = dimtensor::nn;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);
using encoder_t = nn::seq2seq_encoder<Batch, EncSteps, Vocab, Embed, Hidden>;
using decoder_t = nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, Vocab, Embed, Hidden>;
int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  nn::seq2seq_attention_decoder<Batch, EncSteps, EncSteps, Vocab, Embed, Hidden> decoder(  // the mistake
      Vocab(10), Embed(8), Hidden(16), 2);
#else
  decoder_t decoder(Vocab(10), Embed(8), Hidden(16), 2);  // the fix
#endif
  (void)decoder;
}
