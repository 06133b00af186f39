// Parity of the trainable modules with PyTorch (tests/parity/goldens_modules.py,
// torch 1.13): torch.nn.GRU (two layers, eval mode), torch.nn.LayerNorm,
// d2l's PositionWiseFFN and torch.nn.Embedding, with PyTorch's weights
// loaded (from the folder of <key>.npy and from weights.safetensors).
// Outputs, final state and the gradients of sum(out * G) with respect to
// the inputs and every parameter agree within 1e-5.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/embedding.hpp>
#include <dimtensor/nn/feed_forward.hpp>
#include <dimtensor/nn/gru.hpp>
#include <dimtensor/nn/layer_norm.hpp>

#include <catch2/catch.hpp>

#include "parity/support.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <type_traits>

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace modules_parity {

DIMTENSOR_DIM(Time);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFNHidden);
DIMTENSOR_DIM(Vocab);

using parity_support::check_close;
using parity_support::data_dir;
using parity_support::load;
using parity_support::load_both_ways;

/// Every parameter's gradient against grad_<key>.npy.
template <class Module>
void check_parameter_grads(Module const& module, std::filesystem::path const& dir) {
  module.for_each_parameter([&](std::string const& key, auto const& parameter) {
    using tensor_type = std::remove_cvref_t<decltype(parameter)>;
    check_close("grad of " + key, parameter.grad(), load<tensor_type>(dir, "grad_" + key));
  });
}

}  // namespace modules_parity

using namespace modules_parity;

TEST_CASE("gru matches torch.nn.GRU: two layers, eval mode, outputs, state and gradients",
          "[parity][modules][gru]") {
  auto const dir = data_dir("attention", "module_gru");
  using x_t = dt::tensor<float, Time, Batch, Embed>;
  using seq_t = dt::tensor<float, Time, Batch, Hidden>;
  using state_t = dt::tensor<float, nn::Layers, Batch, Hidden>;
  nn::gru<Time, Batch, Embed, Hidden> net(Embed(4), Hidden(5), 2, 0.1);
  net.eval();
  load_both_ways(net, dir);
  auto x = load<x_t>(dir, "X");
  auto h0 = load<state_t>(dir, "H0");
  x.requires_grad_();
  h0.requires_grad_();
  auto const [out, state] = net(x, h0);
  check_close("output", out, load<seq_t>(dir, "output"));
  check_close("state", state, load<state_t>(dir, "state"));
  auto const loss = dt::sum(out * load<seq_t>(dir, "G_output")) + dt::sum(state * load<state_t>(dir, "G_state"));
  dt::eval(loss).backward();
  check_close("grad of X", x.grad(), load<x_t>(dir, "grad_X"));
  check_close("grad of H0", h0.grad(), load<state_t>(dir, "grad_H0"));
  check_parameter_grads(net, dir);

  dt::autograd::no_grad const guard;
  auto const [out0, state0] = net(x);
  check_close("output from a zero state", out0, load<seq_t>(dir, "output_zero_state"));
  check_close("state from a zero state", state0, load<state_t>(dir, "state_zero_state"));
}

TEST_CASE("layer_norm matches torch.nn.LayerNorm: output and gradients", "[parity][modules][layer_norm]") {
  auto const dir = data_dir("attention", "module_layer_norm");
  using x_t = dt::tensor<float, Batch, Steps, Hidden>;
  nn::layer_norm<Hidden> net(Hidden(6));
  load_both_ways(net, dir);
  auto x = load<x_t>(dir, "X");
  x.requires_grad_();
  auto const out = net(x);
  check_close("output", out, load<x_t>(dir, "output"));
  dt::eval(dt::sum(out * load<x_t>(dir, "G_output"))).backward();
  check_close("grad of X", x.grad(), load<x_t>(dir, "grad_X"));
  check_parameter_grads(net, dir);
}

TEST_CASE("feed_forward matches d2l's PositionWiseFFN: output and gradients", "[parity][modules][feed_forward]") {
  auto const dir = data_dir("attention", "module_ffn");
  using x_t = dt::tensor<float, Batch, Steps, Hidden>;
  nn::feed_forward<Hidden, FFNHidden> net(Hidden(4), FFNHidden(8), Hidden(4));
  load_both_ways(net, dir);
  auto x = load<x_t>(dir, "X");
  x.requires_grad_();
  auto const out = net(x);
  check_close("output", out, load<x_t>(dir, "output"));
  dt::eval(dt::sum(out * load<x_t>(dir, "G_output"))).backward();
  check_close("grad of X", x.grad(), load<x_t>(dir, "grad_X"));
  check_parameter_grads(net, dir);
}

TEST_CASE("embedding matches torch.nn.Embedding: output and the weight's gradient", "[parity][modules][embedding]") {
  auto const dir = data_dir("attention", "module_embedding");
  using out_t = dt::tensor<float, Batch, Steps, Embed>;
  nn::embedding<Vocab, Embed> net(Vocab(10), Embed(4));
  load_both_ways(net, dir);
  auto const tokens = load<dt::tensor<std::int64_t, Batch, Steps>>(dir, "tokens");
  auto const out = net(tokens);
  check_close("output", out, load<out_t>(dir, "output"));
  dt::eval(dt::sum(out * load<out_t>(dir, "G_output"))).backward();
  check_parameter_grads(net, dir);
}
