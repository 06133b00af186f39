// The model families of <dimtensor/models/>, loaded from checkpoints that
// transformers itself wrote, against transformers in PyTorch 2
// (benchmarks/peers/torch2_hf.py; scripts/performance.py runs both):
//
//   dimtensor/bert_base_fwd      BertModel at bert-base size (vocabulary
//                                30,522, hidden 768, 12 layers, 12 heads,
//                                intermediate 3072, GELU), batch 32 × 128
//                                with an attention_mask of lengths 65–128;
//                                forward under no_grad
//   dimtensor/bert_base_fwdbwd   the same, forward and backward of
//                                sum(last_hidden_state * G), dropout 0
//   dimtensor/gpt2_greedy        GPT2LMHeadModel at gpt2 size (vocabulary
//                                50,257, 1,024 positions, 768 hidden,
//                                12 layers): greedy decoding of 32 new
//                                tokens after a prompt of 32, with the
//                                cache; one call decodes all 32 (the peer's
//                                generate(do_sample=False) does the same)
//
// The models and inputs come from `torch2_hf.py --make DIR` (weights drawn
// by transformers' own initialization, saved by save_pretrained), named by
// DIMTENSOR_BENCH_HF=DIR; without it each case is skipped.
// DIMTENSOR_BENCH_INPUTS=OUT writes dimtensor's results before timing (the
// last hidden state, the loss, the gradients of the first and the last
// layer's intermediate.dense.weight; the decoded tokens), so that the peer
// checks it computes the same before it times anything.

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/models/bert.hpp>
#include <dimtensor/models/gpt2.hpp>

#include "ratio_reporter.hpp"

namespace {

namespace dt = dimtensor;
namespace models = dt::models;

using bert_t = models::bert<>;
using gpt2_t = models::gpt2<>;
using ids_t = dt::tensor<std::int64_t, models::Batch, models::Tokens>;
using hidden_t = dt::tensor<float, models::Batch, models::Tokens, models::Hidden>;

std::optional<std::filesystem::path> models_dir() {
  char const* dir = std::getenv("DIMTENSOR_BENCH_HF");
  if (dir == nullptr) return std::nullopt;
  return std::filesystem::path(dir);
}

struct bert_case {
  bert_t net;
  ids_t ids, mask;
  hidden_t g;
  bool warm_forward = false, warm_backward = false;

  explicit bert_case(std::filesystem::path const& dir)
      : net(bert_t::from_pretrained(dir / "bert")),
        ids(dt::load_npy<ids_t>(dir / "bert" / "input_ids.npy")),
        mask(dt::load_npy<ids_t>(dir / "bert" / "attention_mask.npy")),
        g(dt::load_npy<hidden_t>(dir / "bert" / "G.npy")) {}

  hidden_t forward() {
    warm_forward = true;
    dt::autograd::no_grad const no_grad;
    net.eval();
    return net(ids, mask).last_hidden_state;
  }

  auto forward_backward() {
    warm_backward = true;
    net.train();
    dt::nn::zero_grad(net);
    auto loss = dt::eval(dt::sum(net(ids, mask).last_hidden_state * g));
    loss.backward();
    return loss;
  }

  // One untimed call first, as the peer makes (one call is the whole
  // measurement at this size).
  void warm_up(bool backward) {
    if (backward && !warm_backward) forward_backward();
    if (!backward && !warm_forward) forward();
  }

  static bert_case* get() {
    static std::unique_ptr<bert_case> c = models_dir() ? std::make_unique<bert_case>(*models_dir()) : nullptr;
    return c.get();
  }
};

constexpr dt::index_t new_tokens = 32;

struct gpt2_case {
  gpt2_t net;
  ids_t prompt;

  explicit gpt2_case(std::filesystem::path const& dir)
      : net(gpt2_t::from_pretrained(dir / "gpt2")), prompt(dt::load_npy<ids_t>(dir / "gpt2" / "prompt.npy")) {}

  ids_t decode() { return models::greedy(net, prompt, new_tokens); }

  static gpt2_case* get() {
    static std::unique_ptr<gpt2_case> c = models_dir() ? std::make_unique<gpt2_case>(*models_dir()) : nullptr;
    return c.get();
  }
};

bool skipped(benchmark::State& state, void const* c) {
  if (c != nullptr) return false;
  state.SkipWithError("DIMTENSOR_BENCH_HF is not set (benchmarks/peers/torch2_hf.py --make DIR writes the models)");
  return true;
}

void bert_base_fwd(benchmark::State& state) {
  auto* c = bert_case::get();
  if (skipped(state, c)) return;
  c->warm_up(false);
  for (auto _ : state) benchmark::DoNotOptimize(c->forward().data());
}
void bert_base_fwdbwd(benchmark::State& state) {
  auto* c = bert_case::get();
  if (skipped(state, c)) return;
  c->warm_up(true);
  for (auto _ : state) benchmark::DoNotOptimize(c->forward_backward().data());
}
void gpt2_greedy(benchmark::State& state) {
  auto* c = gpt2_case::get();
  if (skipped(state, c)) return;
  c->decode();
  for (auto _ : state) benchmark::DoNotOptimize(c->decode().data());
  state.counters["tokens"] = static_cast<double>(new_tokens);
}

void write_results(std::filesystem::path const& out) {
  auto* b = bert_case::get();
  auto* g = gpt2_case::get();
  if (b == nullptr || g == nullptr) return;
  std::filesystem::create_directories(out);
  dt::save_npy(out / "bert_last_hidden_state.npy", b->forward());
  dt::save_npy(out / "bert_loss.npy", b->forward_backward());
  auto const& blks = b->net.encoder.blks;
  dt::save_npy(out / "bert_grad_first.npy", blks.front().ffn.dense1.weight.grad());
  dt::save_npy(out / "bert_grad_last.npy", blks.back().ffn.dense1.weight.grad());
  dt::save_npy(out / "gpt2_tokens.npy", g->decode());
}

// The peer compares the results; here nothing is compared.
bool no_check() { return true; }

}  // namespace

int main(int argc, char** argv) {
  if (char const* dir = std::getenv("DIMTENSOR_BENCH_INPUTS")) {
    dimtensor_bench::set_threads();
    write_results(dir);
  }
  dimtensor_bench::register_timed("dimtensor/bert_base_fwd", bert_base_fwd);
  dimtensor_bench::register_timed("dimtensor/bert_base_fwdbwd", bert_base_fwdbwd);
  dimtensor_bench::register_timed("dimtensor/gpt2_greedy", gpt2_greedy);
  return dimtensor_bench::run_main(argc, argv, no_check);
}
