// The context and the embedded token joined along the step dim
// (torch.cat(..., dim=1)) instead of the features (dim=-1).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: dims_differ<dimtensor::call::concat, dimtensor::diagnostic::operand<1>, dimtensor::diagnostic::at_position<2>, dimtensor::diagnostic::expected<Hidden>, dimtensor::diagnostic::found<Embed> ?>
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
  auto const context = dt::ones<float>(Batch(4), DecSteps::fixed<1>{}, Hidden(16));
  auto const token = dt::ones<float>(Batch(4), DecSteps::fixed<1>{}, Embed(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const x = dt::concat<DecSteps>(context, token);  // the mistake
#else
  auto const x = dt::concat_as<nn::DecoderInput, Hidden, Embed>(context, token);  // the fix
#endif
  (void)x;
}
