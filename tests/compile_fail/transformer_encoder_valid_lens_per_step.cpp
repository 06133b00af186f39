// The Transformer encoder's valid lengths given per step (a mask) instead of
// one per sequence.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/transformer.hpp>
// EXPECT: transformer_valid_lens_dims<dimtensor::call::transformer_encoder, Batch, dimtensor::dims<Batch, EncSteps> ?>
namespace dt = dimtensor;
namespace nn = dimtensor::nn;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);
int main() {
  nn::transformer_encoder<Batch, EncSteps, Vocab, Hidden, FFN> encoder(Vocab(10), Hidden(8), FFN(16), 2, 1);
  auto const X = dt::zeros<std::int64_t>(Batch(2), EncSteps(5));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const lens = dt::ones<std::int64_t>(Batch(2), EncSteps(5));  // the mistake
#else
  auto const lens = dt::full<std::int64_t>(5, Batch(2));  // the fix
#endif
  auto const out = encoder(X, lens);
  (void)out;
}
