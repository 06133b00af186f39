// The Transformer's encoder given the targets' lengths: they measure
// DecSteps, the encoder's sequences run over EncSteps: a compile error
// naming both (d2l's `self.encoder(enc_X, dec_valid_lens)` runs silently).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/transformer.hpp>
// EXPECT: valid_lens_measure_another_dim<dimtensor::call::transformer_encoder, dimtensor::diagnostic::measured<DecSteps>, dimtensor::diagnostic::masked<EncSteps> ?>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);

int main() {
  dt::nn::transformer_encoder<Batch, EncSteps, Vocab, Hidden, FFN> encoder(Vocab(7), Hidden(4), FFN(6), 2, 1);
  dt::tensor<std::int64_t, Batch, EncSteps> const X{{1, 2, 3, 4}, {5, 6, 1, 1}};
  dt::lengths<EncSteps, Batch> const X_valid_len{4, 2};
  dt::lengths<DecSteps, Batch> const Y_valid_len{3, 1};
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const out = encoder(X, Y_valid_len);  // the mistake
#else
  auto const out = encoder(X, X_valid_len);  // the fix
#endif
  (void)X_valid_len;
  (void)Y_valid_len;
  (void)out;
}
