// Token ids read as floats (from a file of numbers) are not indices.
#include <cstdint>
#include <dimtensor/dimtensor.hpp>
// EXPECT: indices_not_integer<dimtensor::call::embedding, float>
// EXPECT: cast<std::int64_t>\(indices\)
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);

int main() {
  dt::generator gen(1);
  dt::nn::embedding<Vocab, Embed> embed(Vocab(10), Embed(8), gen);
  auto const ids = dt::zeros<float>(Batch(4), Steps(7));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const x = embed(ids);  // the mistake
#else
  auto const x = embed(dt::cast<std::int64_t>(ids));
#endif
  (void)x;
}
