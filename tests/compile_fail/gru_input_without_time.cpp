// d2l's Seq2SeqEncoder feeds the GRU the embedded tokens.  Feeding it the
// encoder's state [Layers, Batch, Hidden] instead (a decoder mistake) is a
// tensor without the time dim: the GRU names the dims it takes and the dims
// it was given.
#include <dimtensor/dimtensor.hpp>
// EXPECT: gru_input_dims<Steps, Batch, Embed, dimtensor::dims<dimtensor::nn::Layers, Batch, Hidden> ?>
// EXPECT: takes a tensor of exactly the dims Time, Batch and In
namespace dt = dimtensor;
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);

int main() {
  dt::generator gen(1);
  dt::nn::gru<Steps, Batch, Embed, Hidden> rnn(Embed(8), Hidden(16), 2, 0.0, gen);
  auto const x = dt::randn<float>(gen, Steps(7), Batch(4), Embed(8));
  auto const [outputs, state] = rnn(x);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const again = rnn(state);  // the mistake: the state is not a sequence of inputs
#else
  auto const again = rnn(x, state);  // the state is the initial state
#endif
  (void)outputs;
  (void)again;
}
