// The GRU fed the state where the inputs go, and its rejected result taken
// apart as d2l does (`outputs, state = self.rnn(X)`) and used on: the
// diagnosis naming the dims must be the first error (the harness checks the
// first error of every file), and the binding and the uses must add none.
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
  auto const [again, next] = rnn(state);  // the mistake: the state is not a sequence of inputs
#else
  auto const [again, next] = rnn(x, state);  // the fix: the state is the initial state
#endif
  auto const top = dt::select<dt::nn::Layers>(next, -1);
  auto const summed = dt::sum<Steps>(again) + top;
  (void)outputs;
  (void)summed;
}
