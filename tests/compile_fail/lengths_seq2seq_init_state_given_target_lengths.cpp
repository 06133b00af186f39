// The Bahdanau decoder's init_state given the targets' lengths instead of
// the sources' (d2l's `init_state(enc_outputs, enc_valid_lens)`): they
// measure DecSteps, the attention runs over EncSteps: a compile error
// naming both.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/seq2seq.hpp>
// EXPECT: valid_lens_measure_another_dim<dimtensor::call::seq2seq_attention_decoder, dimtensor::diagnostic::measured<DecSteps>, dimtensor::diagnostic::masked<EncSteps> ?>
namespace dt = dimtensor;
namespace nn = dimtensor::nn;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);

int main() {
  nn::seq2seq_encoder<Batch, EncSteps, Vocab, Embed, Hidden> encoder(Vocab(10), Embed(8), Hidden(16), 2);
  nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, Vocab, Embed, Hidden> decoder(Vocab(10), Embed(8),
                                                                                         Hidden(16), 2);
  dt::tensor<std::int64_t, Batch, EncSteps> const X{{1, 2, 3, 4}, {5, 6, 1, 1}};
  dt::lengths<EncSteps, Batch> const X_valid_len{4, 2};
  dt::lengths<DecSteps, Batch> const Y_valid_len{3, 1};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const state = decoder.init_state(encoder(X), Y_valid_len);  // the mistake
#else
  auto const state = decoder.init_state(encoder(X), X_valid_len);  // the fix
#endif
  (void)X_valid_len;
  (void)Y_valid_len;
  (void)state;
}
