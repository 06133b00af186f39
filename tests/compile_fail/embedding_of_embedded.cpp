// An embedding looks up integer token ids and appends its feature dim.
// Looking up ids that already carry the vocabulary dim (one-hot rows) is
// named with both dims.
#include <cstdint>
#include <dimtensor/dimtensor.hpp>
// EXPECT: embedding_indices_have_dim<Vocab, Embed, dimtensor::dims<Batch, Steps, Vocab> ?>
// EXPECT: appends Feat to the dims of the indices
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);

int main() {
  dt::generator gen(1);
  dt::nn::embedding<Vocab, Embed> embed(Vocab(10), Embed(8), gen);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const one_hot = dt::zeros<std::int64_t>(Batch(4), Steps(7), Vocab(10));
  auto const x = embed(one_hot);  // the mistake
#else
  auto const tokens = dt::zeros<std::int64_t>(Batch(4), Steps(7));
  auto const x = embed(tokens);  // [Batch, Steps, Embed]
#endif
  (void)x;
}
