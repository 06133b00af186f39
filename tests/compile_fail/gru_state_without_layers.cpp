// A GRU's state is [Layers, Batch, Hidden], as PyTorch's.  Passing the last
// step's output [Batch, Hidden] as the initial state forgets the layers.
#include <dimtensor/dimtensor.hpp>
// EXPECT: gru_state_dims<dimtensor::nn::Layers, Batch, Hidden, dimtensor::dims<Batch, Hidden> ?>
// EXPECT: a gru's state has the dims \[Layers, Batch, Hidden\]
namespace dt = dimtensor;
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);

int main() {
  dt::generator gen(1);
  dt::nn::gru<Steps, Batch, Embed, Hidden> rnn(Embed(8), Hidden(16), 1, 0.0, gen);
  auto const x = dt::randn<float>(gen, Steps(7), Batch(4), Embed(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const h = dt::randn<float>(gen, Batch(4), Hidden(16));  // the mistake: no Layers
#else
  auto const h = dt::randn<float>(gen, dt::nn::Layers(1), Batch(4), Hidden(16));
#endif
  auto const result = rnn(x, h);
  (void)result;
}
