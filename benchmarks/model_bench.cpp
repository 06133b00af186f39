// Whole models and user-written activations, against PyTorch 2
// (benchmarks/peers/torch2_models.py; scripts/performance.py runs both):
//
//   dimtensor/encoder_small_fwd / _fwdbwd  d2l's TransformerEncoder, hidden 64,
//                                          FFN 256, 4 heads, 2 blocks: where
//                                          the per-operation overhead shows
//   dimtensor/encoder_base_fwd / _fwdbwd   the same at bert-base size: hidden
//                                          768, FFN 3072, 12 heads, 12 blocks
//     batch 32 × 128 tokens of a 1,000-word vocabulary, valid lengths 65–128,
//     dropout 0; forward under no_grad, forward + backward of sum(out * G)
//   dimtensor/gelu_composite_fwdbwd        GELU as users write it,
//                                          x/2 (1 + erf(x/√2)), forward and
//                                          backward over [4096, 3072]
//   dimtensor/gelu_builtin_fwdbwd          dt::gelu, the same
//   dimtensor/swish_composite_fwdbwd       x σ(x) written out, and
//   dimtensor/silu_builtin_fwdbwd          dt::silu
//
// DIMTENSOR_BENCH_INPUTS=DIR writes, before timing, each case's inputs and
// weights (DIR/<case>/: the parameters as <key>.npy under params/, X, lens,
// G) and dimtensor's results (out, the loss sum(out * G) and the gradient of
// every block's ffn.dense1.weight; for the activations y and dx), so that
// the peer checks it computes the same before it times anything.
//
// DIMTENSOR_BENCH_MODELS=small limits the encoders to the small one (the
// bert-base cases take seconds per iteration on one thread).

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/io/state_dict.hpp>
#include <dimtensor/nn/transformer.hpp>

#include "ratio_reporter.hpp"

namespace {

namespace dt = dimtensor;
namespace nn = dt::nn;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);
DIMTENSOR_DIM(Rows);
DIMTENSOR_DIM(Cols);

using encoder_t = nn::transformer_encoder<Batch, Steps, Vocab, Hidden, FFN>;
using hidden_t = dt::tensor<float, Batch, Steps, Hidden>;

constexpr dt::index_t batch = 32, steps = 128, vocab = 1000;

struct encoder_case {
  dt::generator gen;
  encoder_t net;
  dt::tensor<std::int64_t, Batch, Steps> x;
  dt::tensor<std::int64_t, Batch> lens;
  hidden_t g;
  bool warm_forward = false, warm_backward = false;

  encoder_case(dt::index_t hidden, dt::index_t ffn, dt::index_t heads, dt::index_t layers, std::uint64_t seed)
      : gen(seed),
        net(Vocab(vocab), Hidden(hidden), FFN(ffn), heads, layers, 0.0, false, gen),
        x(dt::randint<std::int64_t>(gen, 0, vocab, Batch(batch), Steps(steps))),
        lens(dt::randint<std::int64_t>(gen, 65, steps + 1, Batch(batch))),
        g(dt::randn<float>(gen, Batch(batch), Steps(steps), Hidden(hidden))) {}

  hidden_t forward() {
    warm_forward = true;
    dt::autograd::no_grad const no_grad;
    net.eval();
    return hidden_t(net(x, lens));
  }

  // forward and backward of sum(out * G); returns the loss
  auto forward_backward() {
    warm_backward = true;
    net.train();
    nn::zero_grad(net);
    auto loss = dt::eval(dt::sum(hidden_t(net(x, lens)) * g));
    loss.backward();
    return loss;
  }

  // One untimed call before the first timed one, as the peers make: the
  // first call of a process also pays for first touching the allocator's
  // pages, and at bert-base size one call is the whole measurement.
  void warm_up(bool backward) {
    if (backward && !warm_backward) forward_backward();
    if (!backward && !warm_forward) forward();
  }

  static encoder_case& small() {
    static encoder_case c(64, 256, 4, 2, 31);
    return c;
  }
  static encoder_case& base() {
    static encoder_case c(768, 3072, 12, 12, 37);
    return c;
  }
};

void encoder_small_fwd(benchmark::State& state) {
  auto& c = encoder_case::small();
  c.warm_up(false);
  for (auto _ : state) benchmark::DoNotOptimize(c.forward().data());
}
void encoder_small_fwdbwd(benchmark::State& state) {
  auto& c = encoder_case::small();
  c.warm_up(true);
  for (auto _ : state) benchmark::DoNotOptimize(c.forward_backward().data());
}
void encoder_base_fwd(benchmark::State& state) {
  auto& c = encoder_case::base();
  c.warm_up(false);
  for (auto _ : state) benchmark::DoNotOptimize(c.forward().data());
}
void encoder_base_fwdbwd(benchmark::State& state) {
  auto& c = encoder_case::base();
  c.warm_up(true);
  for (auto _ : state) benchmark::DoNotOptimize(c.forward_backward().data());
}

// An activation over [4096, 3072] (a bert-base FFN's hidden layer for
// 32 × 128 tokens), forward and backward from the gradient g.
using act_t = dt::tensor<float, Rows, Cols>;

struct activation_inputs {
  dt::generator gen{41};
  act_t x = dt::randn<float>(gen, Rows(4096), Cols(3072));
  act_t g = dt::randn<float>(gen, Rows(4096), Cols(3072));
  static activation_inputs& get() {
    static activation_inputs in;
    return in;
  }
};

auto gelu_composite(act_t const& x) { return x * 0.5f * (dt::erf(x * 0.70710678118654752f) + 1.0f); }
auto swish_composite(act_t const& x) { return x * dt::sigmoid(x); }

template <class F>
act_t activation_fwdbwd(F f, act_t& x, act_t const& g) {
  x.zero_grad();
  act_t y = dt::eval(f(x));
  y.backward(g);
  return y;
}

template <int Which>
auto activation(act_t const& x) {
  if constexpr (Which == 0) return gelu_composite(x);
  else if constexpr (Which == 1) return dt::gelu(x);
  else if constexpr (Which == 2) return swish_composite(x);
  else return dt::silu(x);
}

template <int Which>
void activation_fwdbwd_case(benchmark::State& state) {
  auto& in = activation_inputs::get();
  auto x = in.x.detach().requires_grad_();
  for (auto _ : state) {
    benchmark::DoNotOptimize(activation_fwdbwd([](auto const& v) { return activation<Which>(v); }, x, in.g).data());
  }
}

bool base_models() {
  char const* which = std::getenv("DIMTENSOR_BENCH_MODELS");
  return which == nullptr || std::string(which) != "small";
}

void write_encoder(std::filesystem::path const& dir, encoder_case& c) {
  nn::save_parameters(c.net, dir / "params");
  dt::save_npy(dir / "X.npy", c.x);
  dt::save_npy(dir / "lens.npy", c.lens);
  dt::save_npy(dir / "G.npy", c.g);
  dt::save_npy(dir / "out.npy", c.forward());
  dt::save_npy(dir / "loss.npy", c.forward_backward());
  for (std::size_t i = 0; i < c.net.blks.size(); ++i) {
    dt::save_npy(dir / ("grad_dense1_" + std::to_string(i) + ".npy"), c.net.blks.at(i).ffn.dense1.weight.grad());
  }
}

template <int Which>
void write_activation(std::filesystem::path const& dir) {
  auto& in = activation_inputs::get();
  auto x = in.x.detach().requires_grad_();
  auto const y = activation_fwdbwd([](auto const& v) { return activation<Which>(v); }, x, in.g);
  std::filesystem::create_directories(dir);
  dt::save_npy(dir / "y.npy", y);
  dt::save_npy(dir / "dx.npy", x.grad());
}

void write_inputs(std::filesystem::path const& dir) {
  write_encoder(dir / "encoder_small", encoder_case::small());
  if (base_models()) write_encoder(dir / "encoder_base", encoder_case::base());
  auto& in = activation_inputs::get();
  std::filesystem::create_directories(dir / "activation");
  dt::save_npy(dir / "activation" / "x.npy", in.x);
  dt::save_npy(dir / "activation" / "g.npy", in.g);
  write_activation<0>(dir / "gelu_composite");
  write_activation<1>(dir / "gelu_builtin");
  write_activation<2>(dir / "swish_composite");
  write_activation<3>(dir / "silu_builtin");
}

// The composites and the built-in functions compute the same, forward and
// backward (a check of the harness, on a slice of the activations' size so
// that it costs nothing beside the timed cases; the peer compares with
// PyTorch).
bool results_agree() {
  dt::generator gen(43);
  act_t const x = dt::randn<float>(gen, Rows(64), Cols(3072));
  act_t const g = dt::randn<float>(gen, Rows(64), Cols(3072));
  double worst = 0;
  for (int pair = 0; pair < 2; ++pair) {
    auto a = x.detach().requires_grad_();
    auto b = x.detach().requires_grad_();
    act_t ya, yb;
    if (pair == 0) {
      ya = activation_fwdbwd([](auto const& v) { return activation<0>(v); }, a, g);
      yb = activation_fwdbwd([](auto const& v) { return activation<1>(v); }, b, g);
    } else {
      ya = activation_fwdbwd([](auto const& v) { return activation<2>(v); }, a, g);
      yb = activation_fwdbwd([](auto const& v) { return activation<3>(v); }, b, g);
    }
    for (dt::index_t i = 0; i < ya.size(); ++i) {
      worst = std::fmax(worst, std::fabs(ya.data()[i] - yb.data()[i]));
      worst = std::fmax(worst, std::fabs(a.grad().data()[i] - b.grad().data()[i]));
    }
  }
  return dimtensor_bench::agrees("model_bench", worst, 1e-5);
}

}  // namespace

int main(int argc, char** argv) {
  if (char const* dir = std::getenv("DIMTENSOR_BENCH_INPUTS")) {
    dimtensor_bench::set_threads();
    write_inputs(dir);
  }
  dimtensor_bench::register_timed("dimtensor/encoder_small_fwd", encoder_small_fwd);
  dimtensor_bench::register_timed("dimtensor/encoder_small_fwdbwd", encoder_small_fwdbwd);
  if (base_models()) {
    dimtensor_bench::register_timed("dimtensor/encoder_base_fwd", encoder_base_fwd);
    dimtensor_bench::register_timed("dimtensor/encoder_base_fwdbwd", encoder_base_fwdbwd);
  }
  dimtensor_bench::register_timed("dimtensor/gelu_composite_fwdbwd", activation_fwdbwd_case<0>);
  dimtensor_bench::register_timed("dimtensor/gelu_builtin_fwdbwd", activation_fwdbwd_case<1>);
  dimtensor_bench::register_timed("dimtensor/swish_composite_fwdbwd", activation_fwdbwd_case<2>);
  dimtensor_bench::register_timed("dimtensor/silu_builtin_fwdbwd", activation_fwdbwd_case<3>);
  return dimtensor_bench::run_main(argc, argv, results_agree);
}
