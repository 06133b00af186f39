// The GRU's initial state given batch-first ([Batch, Layers, Hidden]): its
// input may come in any order (dims by name), but the state is PyTorch's
// [num_layers, batch, num_hiddens] and the GRU checks that order.
#include <dimtensor/dimtensor.hpp>
// EXPECT: gru_state_dims<dimtensor::nn::Layers, Batch, Hidden, dimtensor::dims<Batch, dimtensor::nn::Layers, Hidden> ?>
// EXPECT: a gru's state has the dims .Layers, Batch, Hidden., in this order
namespace dt = dimtensor;
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);

int main() {
  dt::generator gen(1);
  dt::nn::gru<Steps, Batch, Embed, Hidden> rnn(Embed(8), Hidden(16), 2, 0.0, gen);
  auto const x = dt::randn<float>(gen, Steps(7), Batch(4), Embed(8));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const h0 = dt::zeros<float>(Batch(4), dt::nn::Layers(2), Hidden(16));  // the mistake
#else
  auto const h0 = dt::zeros<float>(dt::nn::Layers(2), Batch(4), Hidden(16));  // the fix
#endif
  auto const [outputs, state] = rnn(x, h0);
  (void)outputs;
  (void)state;
}
