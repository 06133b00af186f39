// The attention modules, autograd and the optimizers on dimtensor::cuda
// against the CPU backend: modules of both backends drawn from the same seed
// (parameters are drawn on the host, so they are equal), the same inputs,
// outputs, attention weights, gradients and updated parameters within 1e-5
// (absolute plus relative); and the d2l goldens of
// tests/parity/data/attention, loaded straight into modules on the device.
#include "support.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <dimtensor/io/npy.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/parameters.hpp>
#include <dimtensor/optim.hpp>

#ifndef DIMTENSOR_PARITY_DATA_DIR
#error "DIMTENSOR_PARITY_DATA_DIR is not defined: build the CUDA tests with tests/cuda/CMakeLists.txt"
#endif

namespace cuda_nn_test {

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
using cuda_test::check_same;
using cuda_test::device;
using cuda_test::on_device;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Out);

template <class Backend>
using additive_t = nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden, float, Backend>;
template <class Backend>
using dot_t = nn::dot_product_attention<Queries, KVPairs, Feat, float, Backend>;
template <class Backend>
using mha_t = nn::multi_head_attention<Queries, KVPairs, Hidden, Hidden, Hidden, Hidden, float, Backend>;

// ---------------------------------------------------------------------------
// Attention modules, forward
// ---------------------------------------------------------------------------

TEST_CASE("additive attention", "[cuda][attention][additive]") {
  dt::generator gen_cpu(31);
  dt::generator gen_dev(31);
  additive_t<dt::cpu> cpu_net(KeyFeat(6), QueryFeat(5), Hidden(9), 0.0, gen_cpu);
  additive_t<device> dev_net(KeyFeat(6), QueryFeat(5), Hidden(9), 0.0, gen_dev);
  cpu_net.eval();
  dev_net.eval();
  check_same("W_q drawn from the same seed", dev_net.W_q.weight, cpu_net.W_q.weight, 0.0);
  check_same("w_v drawn from the same seed", dev_net.w_v.weight, cpu_net.w_v.weight, 0.0);

  dt::generator gen(32);
  auto const q = dt::randn<float>(gen, Batch(3), Queries(4), QueryFeat(5));
  auto const k = dt::randn<float>(gen, Batch(3), KVPairs(8), KeyFeat(6));
  auto const v = dt::randn<float>(gen, Batch(3), KVPairs(8), ValueFeat(7));
  auto const lens1 = dt::randint<std::int64_t>(gen, 0, 9, Batch(3));
  auto const lens2 = dt::randint<std::int64_t>(gen, 0, 9, Batch(3), Queries(4));
  auto const dq = on_device(q);
  auto const dk = on_device(k);
  auto const dv = on_device(v);

  check_same("1-D valid_lens output", dev_net(dq, dk, dv, on_device(lens1)), cpu_net(q, k, v, lens1));
  check_same("1-D valid_lens weights", dev_net.attention_weights<Batch, Queries, KVPairs>(),
             cpu_net.attention_weights<Batch, Queries, KVPairs>());
  check_same("2-D valid_lens output", dev_net(dq, dk, dv, on_device(lens2)), cpu_net(q, k, v, lens2));
  check_same("2-D valid_lens weights", dev_net.attention_weights<Batch, Queries, KVPairs>(),
             cpu_net.attention_weights<Batch, Queries, KVPairs>());
  check_same("no valid_lens output", dev_net(dq, dk, dv), cpu_net(q, k, v));
}

TEST_CASE("scaled dot-product attention", "[cuda][attention][dot_product]") {
  dot_t<dt::cpu> cpu_net(0.0);
  dot_t<device> dev_net(0.0);
  cpu_net.eval();
  dev_net.eval();
  dt::generator gen(33);
  auto const q = dt::randn<float>(gen, Batch(4), Queries(10), Feat(32));
  auto const k = dt::randn<float>(gen, Batch(4), KVPairs(12), Feat(32));
  auto const v = dt::randn<float>(gen, Batch(4), KVPairs(12), ValueFeat(8));
  auto const lens1 = dt::randint<std::int64_t>(gen, 0, 13, Batch(4));
  auto const lens2 = dt::randint<std::int64_t>(gen, 0, 13, Batch(4), Queries(10));
  auto const dq = on_device(q);
  auto const dk = on_device(k);
  auto const dv = on_device(v);

  check_same("1-D valid_lens output", dev_net(dq, dk, dv, on_device(lens1)), cpu_net(q, k, v, lens1));
  check_same("1-D valid_lens weights", dev_net.attention_weights<Batch, Queries, KVPairs>(),
             cpu_net.attention_weights<Batch, Queries, KVPairs>());
  check_same("2-D valid_lens output", dev_net(dq, dk, dv, on_device(lens2)), cpu_net(q, k, v, lens2));
  check_same("no valid_lens output", dev_net(dq, dk, dv), cpu_net(q, k, v));
  check_same("valid_lens=None output", dev_net(dq, dk, dv, std::nullopt), cpu_net(q, k, v, std::nullopt));
}

TEST_CASE("multi-head attention, the named form and d2l's", "[cuda][attention][multi_head]") {
  dt::generator gen_cpu(34);
  dt::generator gen_dev(34);
  mha_t<dt::cpu> cpu_net(Hidden(32), Hidden(32), Hidden(32), Hidden(32), nn::Heads(4), 0.0, true, gen_cpu);
  mha_t<device> dev_net(Hidden(32), Hidden(32), Hidden(32), Hidden(32), nn::Heads(4), 0.0, true, gen_dev);
  cpu_net.eval();
  dev_net.eval();
  check_same("W_o drawn from the same seed", dev_net.W_o.weight, cpu_net.W_o.weight, 0.0);

  dt::generator gen(35);
  auto const x = dt::randn<float>(gen, Batch(3), Queries(6), Hidden(32));
  auto const y = dt::randn<float>(gen, Batch(3), KVPairs(9), Hidden(32));
  auto const lens1 = dt::randint<std::int64_t>(gen, 0, 10, Batch(3));
  auto const lens2 = dt::randint<std::int64_t>(gen, 0, 10, Batch(3), Queries(6));
  auto const dx = on_device(x);
  auto const dy = on_device(y);

  auto const both_forms = [&](std::string const& what, auto const&... lens) {
    check_same(what + ": named output", dev_net(dx, dy, dy, on_device(lens)...), cpu_net(x, y, y, lens...));
    check_same(what + ": named weights", dev_net.attention.attention_weights<Batch, Queries, nn::Heads, KVPairs>(),
               cpu_net.attention.attention_weights<Batch, Queries, nn::Heads, KVPairs>());
    check_same(what + ": forward_d2l output", dev_net.forward_d2l(dx, dy, dy, on_device(lens)...),
               cpu_net.forward_d2l(x, y, y, lens...));
    check_same(what + ": forward_d2l weights", dev_net.attention.attention_weights<nn::BatchHeads, Queries, KVPairs>(),
               cpu_net.attention.attention_weights<nn::BatchHeads, Queries, KVPairs>());
  };
  both_forms("1-D valid_lens", lens1);
  both_forms("2-D valid_lens", lens2);
  both_forms("no valid_lens");
}

// ---------------------------------------------------------------------------
// Autograd
// ---------------------------------------------------------------------------

TEST_CASE("backward through multi-head attention", "[cuda][autograd][multi_head]") {
  dt::generator gen_cpu(36);
  dt::generator gen_dev(36);
  mha_t<dt::cpu> cpu_net(Hidden(32), Hidden(32), Hidden(32), Hidden(32), nn::Heads(4), 0.0, true, gen_cpu);
  mha_t<device> dev_net(Hidden(32), Hidden(32), Hidden(32), Hidden(32), nn::Heads(4), 0.0, true, gen_dev);

  dt::generator gen(37);
  auto x = dt::randn<float>(gen, Batch(2), Queries(5), Hidden(32));
  auto y = dt::randn<float>(gen, Batch(2), KVPairs(7), Hidden(32));
  auto const g = dt::randn<float>(gen, Batch(2), Queries(5), Hidden(32));
  auto const lens = dt::randint<std::int64_t>(gen, 1, 8, Batch(2));
  auto dx = on_device(x);
  auto dy = on_device(y);
  x.requires_grad_();
  y.requires_grad_();
  dx.requires_grad_();
  dy.requires_grad_();

  auto const compare = [&](std::string const& what) {
    check_same(what + ": grad of the queries", dx.grad(), x.grad());
    check_same(what + ": grad of the keys and values", dy.grad(), y.grad());
    check_same(what + ": grad of W_q.weight", dev_net.W_q.weight.grad(), cpu_net.W_q.weight.grad());
    check_same(what + ": grad of W_k.weight", dev_net.W_k.weight.grad(), cpu_net.W_k.weight.grad());
    check_same(what + ": grad of W_v.weight", dev_net.W_v.weight.grad(), cpu_net.W_v.weight.grad());
    check_same(what + ": grad of W_o.weight", dev_net.W_o.weight.grad(), cpu_net.W_o.weight.grad());
    check_same(what + ": grad of W_o.bias", dev_net.W_o.bias.grad(), cpu_net.W_o.bias.grad());
  };

  SECTION("the named form") {
    cpu_net(x, y, y, lens).backward(g);
    dev_net(dx, dy, dy, on_device(lens)).backward(on_device(g));
    compare("named form");
  }
  SECTION("d2l's form, through a loss") {
    dt::sum(dt::square(cpu_net.forward_d2l(x, y, y, lens) - g)).backward();
    dt::sum(dt::square(dev_net.forward_d2l(dx, dy, dy, on_device(lens)) - on_device(g))).backward();
    compare("forward_d2l");
  }
}

// ---------------------------------------------------------------------------
// Optimizers
// ---------------------------------------------------------------------------

// A two-layer net on @p Backend, drawn from @p gen.
template <class Backend>
struct two_layer {
  explicit two_layer(dt::generator& gen) : first(Feat(12), Hidden(16), true, gen), second(Hidden(16), Out(3), true, gen) {}
  template <class X>
  auto operator()(X const& x) {
    return second(dt::tanh(first(x)));
  }
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") {
    first.for_each_parameter(f, prefix + "first.");
    second.for_each_parameter(f, prefix + "second.");
  }
  nn::linear<Feat, Hidden, float, Backend> first;
  nn::linear<Hidden, Out, float, Backend> second;
};

// Three steps of @p make_optimizer's optimizer on a two-layer net of each
// backend, same seed, same data; the parameters after each step agree.
template <class MakeOptimizer>
void train_both(std::string const& what, MakeOptimizer make_optimizer) {
  dt::generator gen_cpu(38);
  dt::generator gen_dev(38);
  two_layer<dt::cpu> cpu_net(gen_cpu);
  two_layer<device> dev_net(gen_dev);
  auto cpu_opt = make_optimizer(cpu_net);
  auto dev_opt = make_optimizer(dev_net);

  dt::generator gen(39);
  auto const x = dt::randn<float>(gen, Batch(10), Feat(12));
  auto const target = dt::randn<float>(gen, Batch(10), Out(3));
  auto const dx = on_device(x);
  auto const dtarget = on_device(target);
  for (int step = 1; step <= 3; ++step) {
    cpu_opt.zero_grad();
    dev_opt.zero_grad();
    dt::mean(dt::square(cpu_net(x) - target)).backward();
    dt::mean(dt::square(dev_net(dx) - dtarget)).backward();
    cpu_opt.step();
    dev_opt.step();
    std::string const after = what + ", after step " + std::to_string(step);
    check_same(after + ": first.weight", dev_net.first.weight, cpu_net.first.weight);
    check_same(after + ": first.bias", dev_net.first.bias, cpu_net.first.bias);
    check_same(after + ": second.weight", dev_net.second.weight, cpu_net.second.weight);
    check_same(after + ": second.bias", dev_net.second.bias, cpu_net.second.bias);
  }
}

TEST_CASE("SGD and Adam steps", "[cuda][optim]") {
  SECTION("SGD with momentum and weight decay") {
    train_both("sgd", [](auto& net) { return dt::optim::sgd(net, 0.1, 0.9, 0.01); });
  }
  SECTION("Adam with weight decay") {
    train_both("adam", [](auto& net) { return dt::optim::adam(net, 0.01, {0.9, 0.999}, 1e-8, 0.01); });
  }
}

// ---------------------------------------------------------------------------
// d2l goldens (tests/parity/data/attention), modules on the device
// ---------------------------------------------------------------------------

std::filesystem::path case_dir(std::string const& name) {
  return std::filesystem::path(DIMTENSOR_PARITY_DATA_DIR) / "attention" / name;
}

/// The golden <role>.npy of @p dir as a CPU tensor.
template <class Tensor>
Tensor golden(std::filesystem::path const& dir, std::string const& role) {
  return dt::load_npy<Tensor>(dir / (role + ".npy"));
}

template <class... Specs>
using host = dt::basic_tensor<dt::cpu, float, Specs...>;
using lens1_t = dt::basic_tensor<dt::cpu, std::int64_t, Batch>;
using lens2_t = dt::basic_tensor<dt::cpu, std::int64_t, Batch, Queries>;

TEST_CASE("the attention modules match d2l's goldens", "[cuda][attention][parity]") {
  SECTION("additive attention, random") {
    auto const dir = case_dir("additive_random");
    additive_t<device> net(KeyFeat(6), QueryFeat(5), Hidden(9), 0.2);
    net.eval();
    nn::load_parameters(net, dir);
    auto const q = on_device(golden<host<Batch, Queries, QueryFeat>>(dir, "queries"));
    auto const k = on_device(golden<host<Batch, KVPairs, KeyFeat>>(dir, "keys"));
    auto const v = on_device(golden<host<Batch, KVPairs, ValueFeat>>(dir, "values"));
    check_same("1-D output", net(q, k, v, on_device(golden<lens1_t>(dir, "valid_lens_1d"))),
               golden<host<Batch, Queries, ValueFeat>>(dir, "output_1d"));
    check_same("1-D weights", net.attention_weights<Batch, Queries, KVPairs>(),
               golden<host<Batch, Queries, KVPairs>>(dir, "attention_weights_1d"));
    check_same("2-D output", net(q, k, v, on_device(golden<lens2_t>(dir, "valid_lens_2d"))),
               golden<host<Batch, Queries, ValueFeat>>(dir, "output_2d"));
    check_same("no valid_lens output", net(q, k, v), golden<host<Batch, Queries, ValueFeat>>(dir, "output_none"));
  }
  SECTION("dot-product attention, random") {
    auto const dir = case_dir("dot_product_random");
    dot_t<device> net(0.5);
    net.eval();
    auto const q = on_device(golden<host<Batch, Queries, Feat>>(dir, "queries"));
    auto const k = on_device(golden<host<Batch, KVPairs, Feat>>(dir, "keys"));
    auto const v = on_device(golden<host<Batch, KVPairs, ValueFeat>>(dir, "values"));
    check_same("1-D output", net(q, k, v, on_device(golden<lens1_t>(dir, "valid_lens_1d"))),
               golden<host<Batch, Queries, ValueFeat>>(dir, "output_1d"));
    check_same("2-D output", net(q, k, v, on_device(golden<lens2_t>(dir, "valid_lens_2d"))),
               golden<host<Batch, Queries, ValueFeat>>(dir, "output_2d"));
    check_same("2-D weights", net.attention_weights<Batch, Queries, KVPairs>(),
               golden<host<Batch, Queries, KVPairs>>(dir, "attention_weights_2d"));
  }
  SECTION("multi-head attention with bias, both forms, weights from safetensors") {
    auto const dir = case_dir("mha_bias");
    mha_t<device> net(Hidden(12), Hidden(12), Hidden(12), Hidden(12), nn::Heads(3), 0.5, true);
    net.eval();
    nn::load_parameters(net, dir / "weights.safetensors");
    auto const x = on_device(golden<host<Batch, Queries, Hidden>>(dir, "queries"));
    auto const k = on_device(golden<host<Batch, KVPairs, Hidden>>(dir, "keys"));
    auto const v = on_device(golden<host<Batch, KVPairs, Hidden>>(dir, "values"));
    auto const lens = on_device(golden<lens2_t>(dir, "valid_lens_2d"));
    auto const want = golden<host<Batch, Queries, Hidden>>(dir, "output_2d");
    auto const want_weights = golden<host<nn::BatchHeads, Queries, KVPairs>>(dir, "attention_weights_2d");
    check_same("named output", net(x, k, v, lens), want);
    check_same("forward_d2l output", net.forward_d2l(x, k, v, lens), want);
    check_same("forward_d2l weights", net.attention.attention_weights<nn::BatchHeads, Queries, KVPairs>(),
               want_weights);
  }
}

}  // namespace cuda_nn_test
