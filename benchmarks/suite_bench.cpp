// The dimtensor side of the attention suite against PyTorch 2
// (scripts/performance.py runs it beside benchmarks/peers/torch2_bench.py on
// the same inputs, and writes docs/performance.md), and its libtorch 1.13
// peer (d2l's code, d2l_libtorch.hpp) when libtorch is found.
//
//   dot_fwd_1d / dot_fwd_2d         nn::dot_product_attention, eval mode, no
//                                   recording: B16, Q512, K512, d64, 1-D
//                                   ([Batch]) or 2-D ([Batch, Queries]) lengths
//   dot_fwdbwd_1d / dot_fwdbwd_2d   the same, recording, then backward of
//                                   sum(out * G) (gradients of q, k and v)
//   masked_softmax                  masked_softmax<KV> of [64, 512, 512], 1-D lengths
//   sweep/L                         dot-product attention without lengths, B2,
//                                   Q = K = L (128 … 8192), d64, forward
//   sgemm                           OpenBLAS's SGEMM, 1024³ on the suite's threads:
//                                   the rate the attention figures are compared to
//   toy_projections_xwt / _wt       the toy multi-head attention's four 100×100
//                                   projections alone, as OpenBLAS calls: x·Wᵀ on
//                                   PyTorch's [Out, In] weight, or on Wᵀ stored
//
// Each dot-product case reports `useful_gflops`: 4·d·Σ(valid lengths) FLOPs
// per call (the products over the keys that count) per second.
//
// Environment: DIMTENSOR_BENCH_THREADS (threads, as the other benchmarks);
// DIMTENSOR_BENCH_INPUTS=DIR writes the inputs and dimtensor's outputs as
// .npy files there before timing (the PyTorch 2 peer reads them);
// DIMTENSOR_BENCH_MEMORY=CASE runs CASE once and prints the resident memory
// it added at its peak ("peak_extra_mib <n>"), and nothing else.

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/nn/attention.hpp>

#include "d2l_libtorch.hpp"
#include "ratio_reporter.hpp"

#include <dimtensor/backends/cpu/blas.hpp>

namespace {

namespace dt = dimtensor;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(Hidden);

using lens1_t = dt::lengths<KVPairs, Batch>;
using lens2_t = dt::lengths<KVPairs, Batch, Queries>;

struct inputs {
  static constexpr dt::index_t batch = 16, queries = 512, kv = 512, d = 64;
  dt::generator gen{2026};
  dt::tensor<float, Batch, Queries, Feat> q = dt::randn<float>(gen, Batch(batch), Queries(queries), Feat(d));
  dt::tensor<float, Batch, KVPairs, Feat> k = dt::randn<float>(gen, Batch(batch), KVPairs(kv), Feat(d));
  dt::tensor<float, Batch, KVPairs, ValueFeat> v = dt::randn<float>(gen, Batch(batch), KVPairs(kv), ValueFeat(d));
  dt::tensor<float, Batch, Queries, ValueFeat> g = dt::randn<float>(gen, Batch(batch), Queries(queries), ValueFeat(d));
  lens1_t lens1 = dt::lengths_of<KVPairs>(dt::randint<std::int64_t>(gen, 1, kv + 1, Batch(batch)));
  lens2_t lens2 = dt::lengths_of<KVPairs>(dt::randint<std::int64_t>(gen, 1, kv + 1, Batch(batch), Queries(queries)));
  // masked_softmax [64, 512, 512] over KVPairs, one length per batch row.
  dt::tensor<float, Batch, Queries, KVPairs> scores = dt::randn<float>(gen, Batch(64), Queries(512), KVPairs(512));
  lens1_t scores_lens = dt::lengths_of<KVPairs>(dt::randint<std::int64_t>(gen, 1, 513, Batch(64)));
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention{0.0};
  inputs() { attention.eval(); }
  static inputs& get() {
    static inputs in;
    return in;
  }
};

/// FLOPs of one call that count: 4·d per (query row, valid key).
template <class L>
double useful_flops(L const& lens, dt::index_t rows_per_length) {
  double total = 0;
  auto const c = lens.contiguous();
  for (dt::index_t i = 0; i < c.size(); ++i) total += static_cast<double>(c.data()[i]);
  return 4.0 * inputs::d * total * static_cast<double>(rows_per_length);
}

template <class L>
auto forward(L const& lens) {
  auto& in = inputs::get();
  return in.attention(in.q, in.k, in.v, lens);
}

template <class L>
void dot_fwd(benchmark::State& state, L const& lens, double flops) {
  dt::autograd::no_grad const no_grad;
  for (auto _ : state) {
    auto const out = forward(lens);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["useful_gflops"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

template <class L>
void dot_fwdbwd(benchmark::State& state, L const& lens, double flops) {
  auto& in = inputs::get();
  auto q = in.q.clone().requires_grad_();
  auto k = in.k.clone().requires_grad_();
  auto v = in.v.clone().requires_grad_();
  for (auto _ : state) {
    q.zero_grad();
    k.zero_grad();
    v.zero_grad();
    auto const out = in.attention(q, k, v, lens);
    dt::sum(out * in.g).backward();
    benchmark::DoNotOptimize(q.grad().data());
  }
  // Backward: 2 products for dP and dV, 2 for dQ and dK, 1 to recompute the scores.
  state.counters["useful_gflops"] =
      benchmark::Counter(flops * 3.5 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void dimtensor_dot_fwd_1d(benchmark::State& s) {
  auto& in = inputs::get();
  dot_fwd(s, in.lens1, useful_flops(in.lens1, inputs::queries));
}
void dimtensor_dot_fwd_2d(benchmark::State& s) {
  auto& in = inputs::get();
  dot_fwd(s, in.lens2, useful_flops(in.lens2, 1));
}
void dimtensor_dot_fwdbwd_1d(benchmark::State& s) {
  auto& in = inputs::get();
  dot_fwdbwd(s, in.lens1, useful_flops(in.lens1, inputs::queries));
}
void dimtensor_dot_fwdbwd_2d(benchmark::State& s) {
  auto& in = inputs::get();
  dot_fwdbwd(s, in.lens2, useful_flops(in.lens2, 1));
}

void dimtensor_masked_softmax(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = inputs::get();
  for (auto _ : state) {
    auto const w = dt::masked_softmax<KVPairs>(in.scores, in.scores_lens);
    benchmark::DoNotOptimize(w.data());
  }
}

/// The sweep's inputs for length L (B2, d64, no lengths).
struct sweep_inputs {
  dt::tensor<float, Batch, Queries, Feat> q;
  dt::tensor<float, Batch, KVPairs, Feat> k;
  dt::tensor<float, Batch, KVPairs, ValueFeat> v;
  explicit sweep_inputs(dt::index_t length) {
    dt::generator gen{static_cast<std::uint64_t>(length)};
    q = dt::randn<float>(gen, Batch(2), Queries(length), Feat(64));
    k = dt::randn<float>(gen, Batch(2), KVPairs(length), Feat(64));
    v = dt::randn<float>(gen, Batch(2), KVPairs(length), ValueFeat(64));
  }
};

void dimtensor_sweep(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  dt::index_t const length = state.range(0);
  sweep_inputs const in(length);
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention{0.0};
  attention.eval();
  for (auto _ : state) {
    auto const out = attention(in.q, in.k, in.v);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["useful_gflops"] = benchmark::Counter(4.0 * 64 * 2 * static_cast<double>(length) * length * 1e-9,
                                                       benchmark::Counter::kIsIterationInvariantRate);
}

// ---------------------------------------------------------------------------
// Multi-head attention, B16 · L512 · 8 heads × 64: queries X, keys = values Y,
// 1-D lengths; the named form and d2l's (transpose_qkv).
struct mha_inputs {
  static constexpr dt::index_t batch = 16, length = 512, hidden = 512, heads = 8;
  dt::generator gen{17};
  dt::tensor<float, Batch, Queries, Hidden> x = dt::randn<float>(gen, Batch(batch), Queries(length), Hidden(hidden));
  dt::tensor<float, Batch, KVPairs, Hidden> y = dt::randn<float>(gen, Batch(batch), KVPairs(length), Hidden(hidden));
  dt::tensor<float, Batch, Queries, Hidden> g = dt::randn<float>(gen, Batch(batch), Queries(length), Hidden(hidden));
  lens1_t lens = dt::lengths_of<KVPairs>(dt::randint<std::int64_t>(gen, 1, length + 1, Batch(batch)));
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention{
      Hidden(hidden), Hidden(hidden), Hidden(hidden), Hidden(hidden), dt::nn::Heads(heads), 0.0, false, gen};
  mha_inputs() { attention.eval(); }
  static mha_inputs& get() {
    static mha_inputs in;
    return in;
  }
};

template <bool D2l>
auto mha_forward(mha_inputs& in, dt::tensor<float, Batch, Queries, Hidden> const& x,
                 dt::tensor<float, Batch, KVPairs, Hidden> const& y) {
  if constexpr (D2l) {
    return dt::eval(in.attention.forward_d2l(x, y, y, in.lens));
  } else {
    return dt::eval(in.attention(x, y, y, in.lens));
  }
}

template <bool D2l>
void mha_fwd(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = mha_inputs::get();
  for (auto _ : state) benchmark::DoNotOptimize(mha_forward<D2l>(in, in.x, in.y).data());
}

template <bool D2l>
void mha_fwdbwd(benchmark::State& state) {
  auto& in = mha_inputs::get();
  auto x = in.x.clone().requires_grad_();
  auto y = in.y.clone().requires_grad_();
  for (auto _ : state) {
    x.zero_grad();
    y.zero_grad();
    in.attention.for_each_parameter([](auto const&, auto& p) { p.zero_grad(); });
    mha_forward<D2l>(in, x, y).backward(in.g);
    benchmark::DoNotOptimize(x.grad().data());
  }
}

void dimtensor_mha_fwd(benchmark::State& s) { mha_fwd<false>(s); }
void dimtensor_mha_fwd_d2l(benchmark::State& s) { mha_fwd<true>(s); }
void dimtensor_mha_fwdbwd(benchmark::State& s) { mha_fwdbwd<false>(s); }
void dimtensor_mha_fwdbwd_d2l(benchmark::State& s) { mha_fwdbwd<true>(s); }

// ---------------------------------------------------------------------------
// Additive attention, B16 · Q256 · K256, features 64, hidden 128, 1-D lengths.
struct additive_inputs {
  static constexpr dt::index_t batch = 16, queries = 256, kv = 256, features = 64, hidden = 128;
  dt::generator gen{19};
  dt::tensor<float, Batch, Queries, Feat> q = dt::randn<float>(gen, Batch(batch), Queries(queries), Feat(features));
  dt::tensor<float, Batch, KVPairs, KeyFeat> k = dt::randn<float>(gen, Batch(batch), KVPairs(kv), KeyFeat(features));
  dt::tensor<float, Batch, KVPairs, ValueFeat> v =
      dt::randn<float>(gen, Batch(batch), KVPairs(kv), ValueFeat(features));
  dt::tensor<float, Batch, Queries, ValueFeat> g =
      dt::randn<float>(gen, Batch(batch), Queries(queries), ValueFeat(features));
  lens1_t lens = dt::lengths_of<KVPairs>(dt::randint<std::int64_t>(gen, 1, kv + 1, Batch(batch)));
  dt::nn::additive_attention<Queries, KVPairs, Feat, KeyFeat, Hidden> attention{KeyFeat(features), Feat(features),
                                                                                Hidden(hidden), 0.0, gen};
  additive_inputs() { attention.eval(); }
  static additive_inputs& get() {
    static additive_inputs in;
    return in;
  }
};

void dimtensor_additive_fwd(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = additive_inputs::get();
  for (auto _ : state) benchmark::DoNotOptimize(in.attention(in.q, in.k, in.v, in.lens).data());
}

void dimtensor_additive_fwdbwd(benchmark::State& state) {
  auto& in = additive_inputs::get();
  auto q = in.q.clone().requires_grad_();
  auto k = in.k.clone().requires_grad_();
  auto v = in.v.clone().requires_grad_();
  for (auto _ : state) {
    q.zero_grad();
    k.zero_grad();
    v.zero_grad();
    in.attention.for_each_parameter([](auto const&, auto& p) { p.zero_grad(); });
    dt::eval(in.attention(q, k, v, in.lens)).backward(in.g);
    benchmark::DoNotOptimize(q.grad().data());
  }
}

// ---------------------------------------------------------------------------
// Nadaraya–Watson (d2l's NWKernelRegression.forward, a learned width w):
// 50 test points, keys and values tiled [Test, Train] as d2l tiles them.
DIMTENSOR_DIM(Test);
DIMTENSOR_DIM(Train);
struct nw_inputs {
  dt::tensor<float, Test> x_test;
  dt::tensor<float, Test, Train> keys, values;
  dt::tensor<float> w;
  explicit nw_inputs(dt::index_t n_train) {
    dt::generator gen{static_cast<std::uint64_t>(n_train)};
    auto const x_train = dt::rand<float>(gen, Train(n_train)) * 5.0f;
    auto const y_train = dt::eval(2.0f * dt::sin(x_train) + dt::pow(x_train, 0.8f));
    x_test = dt::arange<float, Test>(0.0, 5.0, 0.1);
    keys = dt::eval(dt::zeros<float>(Test(50), Train(n_train)) + x_train);
    values = dt::eval(dt::zeros<float>(Test(50), Train(n_train)) + y_train);
    w = dt::full<float>(1.3f);
  }
  static nw_inputs& get(dt::index_t n_train) {
    static nw_inputs small(50), large(4096);
    return n_train == 50 ? small : large;
  }
};

void nw(benchmark::State& state, dt::index_t n_train) {
  dt::autograd::no_grad const no_grad;
  auto& in = nw_inputs::get(n_train);
  for (auto _ : state)
    benchmark::DoNotOptimize(dt::nn::nadaraya_watson<Train>(in.x_test, in.keys, in.values, in.w).data());
}
void dimtensor_nw_50(benchmark::State& s) { nw(s, 50); }
void dimtensor_nw_4096(benchmark::State& s) { nw(s, 4096); }

// ---------------------------------------------------------------------------
// The book's toy sizes: per-call overhead.
struct toy_inputs {
  dt::generator gen{23};
  // masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3]))
  dt::tensor<float, Batch, Queries, KVPairs> scores = dt::rand<float>(gen, Batch(2), Queries(2), KVPairs(4));
  lens1_t lens{2, 3};
  lens1_t lens_kv{2, 6};
  // AdditiveAttention(key_size=2, query_size=20, num_hiddens=8): queries (2, 1, 20), keys ones (2, 10, 2),
  // values arange(40) (2, 10, 4).
  dt::tensor<float, Batch, Queries, Feat> add_q = dt::randn<float>(gen, Batch(2), Queries(1), Feat(20));
  dt::tensor<float, Batch, KVPairs, KeyFeat> add_k = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
  dt::tensor<float, Batch, KVPairs, ValueFeat> values =
      dt::eval(dt::zeros<float>(Batch(2), KVPairs(10), ValueFeat(4)) +
               (dt::unsqueeze<ValueFeat, 1>(4.0f * dt::arange<float>(KVPairs(10))) + dt::arange<float>(ValueFeat(4))));
  dt::nn::additive_attention<Queries, KVPairs, Feat, KeyFeat, Hidden> additive{KeyFeat(2), Feat(20), Hidden(8), 0.1,
                                                                               gen};
  // DotProductAttention: queries (2, 1, 2), keys ones (2, 10, 2).
  dt::tensor<float, Batch, Queries, KeyFeat> dot_q = dt::randn<float>(gen, Batch(2), Queries(1), KeyFeat(2));
  dt::nn::dot_product_attention<Queries, KVPairs, KeyFeat> dot{0.5};
  // MultiHeadAttention(100, 5): X ones (2, 4, 100), Y ones (2, 6, 100), valid_lens [3, 2].
  dt::tensor<float, Batch, Queries, Hidden> mha_x = dt::ones<float>(Batch(2), Queries(4), Hidden(100));
  dt::tensor<float, Batch, KVPairs, Hidden> mha_y = dt::ones<float>(Batch(2), KVPairs(6), Hidden(100));
  lens1_t mha_lens{3, 2};
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> mha{Hidden(100),      Hidden(100), Hidden(100), Hidden(100),
                                                             dt::nn::Heads(5), 0.5,         false,       gen};
  toy_inputs() {
    additive.eval();
    dot.eval();
    mha.eval();
  }
  static toy_inputs& get() {
    static toy_inputs in;
    return in;
  }
};

void dimtensor_toy_masked_softmax(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = toy_inputs::get();
  for (auto _ : state) benchmark::DoNotOptimize(dt::masked_softmax<KVPairs>(in.scores, in.lens).data());
}
void dimtensor_toy_additive(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = toy_inputs::get();
  for (auto _ : state) benchmark::DoNotOptimize(in.additive(in.add_q, in.add_k, in.values, in.lens_kv).data());
}
void dimtensor_toy_dot(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = toy_inputs::get();
  for (auto _ : state) benchmark::DoNotOptimize(in.dot(in.dot_q, in.add_k, in.values, in.lens_kv).data());
}
void dimtensor_toy_mha(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = toy_inputs::get();
  for (auto _ : state) benchmark::DoNotOptimize(dt::eval(in.mha(in.mha_x, in.mha_y, in.mha_y, in.mha_lens)).data());
}

#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
void blas_sgemm(benchmark::State& state) {
  int const n = 1024;
  std::vector<float> a(static_cast<std::size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  dimtensor::backends::cpu::detail::set_blas_threads(dt::get_num_threads());
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["useful_gflops"] =
      benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// The four projections of the toy multi-head attention alone (W_q on 2·4
// query rows, W_k and W_v on 2·6 key rows, W_o on 2·4 rows; 100 features in
// and out), as OpenBLAS calls: x·Wᵀ with the weight as PyTorch and
// nn::linear keep it, [Out, In] (the dot-product form), or with Wᵀ stored,
// [In, Out].  The floor under toy_mha that the BLAS sets.
void blas_toy_projections(benchmark::State& state, bool weight_transposed) {
  int const features = 100;
  int const rows[] = {8, 12, 12, 8};
  std::vector<float> x(static_cast<std::size_t>(12) * features, 0.5f), y(x.size());
  std::vector<std::vector<float>> weights(4, std::vector<float>(static_cast<std::size_t>(features) * features));
  for (std::size_t l = 0; l < weights.size(); ++l)
    for (std::size_t i = 0; i < weights[l].size(); ++i) weights[l][i] = static_cast<float>((i * 7 + l) % 13) * 0.01f;
  dimtensor::backends::cpu::detail::set_blas_threads(dt::get_num_threads());
  for (auto _ : state) {
    for (std::size_t l = 0; l < weights.size(); ++l) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, weight_transposed ? CblasNoTrans : CblasTrans, rows[l], features,
                  features, 1.0f, x.data(), features, weights[l].data(), features, 0.0f, y.data(), features);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["useful_gflops"] = benchmark::Counter(2.0 * (8 + 12 + 12 + 8) * features * features * 1e-9,
                                                       benchmark::Counter::kIsIterationInvariantRate);
}
void blas_toy_projections_xwt(benchmark::State& state) { blas_toy_projections(state, false); }
void blas_toy_projections_wt(benchmark::State& state) { blas_toy_projections(state, true); }
#endif

#if DIMTENSOR_HAVE_LIBTORCH
// d2l's DotProductAttention and masked_softmax, in libtorch.
struct torch_inputs {
  torch::Tensor q, k, v, g, lens1, lens2, scores, scores_lens;
  torch_inputs() {
    auto& in = inputs::get();
    q = dimtensor_bench::to_torch(in.q);
    k = dimtensor_bench::to_torch(in.k);
    v = dimtensor_bench::to_torch(in.v);
    g = dimtensor_bench::to_torch(in.g);
    lens1 = dimtensor_bench::to_torch(in.lens1);
    lens2 = dimtensor_bench::to_torch(in.lens2);
    scores = dimtensor_bench::to_torch(in.scores);
    scores_lens = dimtensor_bench::to_torch(in.scores_lens);
  }
  static torch_inputs& get() {
    static torch_inputs in;
    return in;
  }
};

void torch_fwd(benchmark::State& state, torch::Tensor const& lens) {
  torch::NoGradGuard const no_grad;
  auto& in = torch_inputs::get();
  for (auto _ : state) {
    auto const out = dimtensor_bench::dot_product_attention(in.q, in.k, in.v, lens);
    benchmark::DoNotOptimize(out.data_ptr());
  }
}
void torch_fwdbwd(benchmark::State& state, torch::Tensor const& lens) {
  auto& in = torch_inputs::get();
  auto q = in.q.clone().requires_grad_(), k = in.k.clone().requires_grad_(), v = in.v.clone().requires_grad_();
  for (auto _ : state) {
    q.mutable_grad() = torch::Tensor();
    k.mutable_grad() = torch::Tensor();
    v.mutable_grad() = torch::Tensor();
    (dimtensor_bench::dot_product_attention(q, k, v, lens) * in.g).sum().backward();
    benchmark::DoNotOptimize(q.grad().data_ptr());
  }
}
void libtorch_dot_fwd_1d(benchmark::State& s) { torch_fwd(s, torch_inputs::get().lens1); }
void libtorch_dot_fwd_2d(benchmark::State& s) { torch_fwd(s, torch_inputs::get().lens2); }
void libtorch_dot_fwdbwd_1d(benchmark::State& s) { torch_fwdbwd(s, torch_inputs::get().lens1); }
void libtorch_dot_fwdbwd_2d(benchmark::State& s) { torch_fwdbwd(s, torch_inputs::get().lens2); }
// d2l's AdditiveAttention.forward in libtorch, eval mode.
struct torch_additive {
  torch::Tensor q, k, v, g, lens, w_q, w_k, w_v;
  torch_additive() {
    auto& in = additive_inputs::get();
    q = dimtensor_bench::to_torch(in.q);
    k = dimtensor_bench::to_torch(in.k);
    v = dimtensor_bench::to_torch(in.v);
    g = dimtensor_bench::to_torch(in.g);
    lens = dimtensor_bench::to_torch(in.lens);
    w_q = dimtensor_bench::to_torch(in.attention.W_q.weight);
    w_k = dimtensor_bench::to_torch(in.attention.W_k.weight);
    w_v = dimtensor_bench::to_torch(in.attention.w_v.weight);
  }
  torch::Tensor forward(torch::Tensor const& qq, torch::Tensor const& kk, torch::Tensor const& vv) const {
    auto const features = torch::tanh(torch::linear(qq, w_q).unsqueeze(2) + torch::linear(kk, w_k).unsqueeze(1));
    auto const scores = torch::linear(features, w_v).squeeze(-1);
    return torch::bmm(dimtensor_bench::masked_softmax(scores, lens), vv);
  }
  static torch_additive& get() {
    static torch_additive in;
    return in;
  }
};
void libtorch_additive_fwd(benchmark::State& state) {
  torch::NoGradGuard const no_grad;
  auto& in = torch_additive::get();
  for (auto _ : state) benchmark::DoNotOptimize(in.forward(in.q, in.k, in.v).data_ptr());
}
void libtorch_additive_fwdbwd(benchmark::State& state) {
  auto& in = torch_additive::get();
  auto q = in.q.clone().requires_grad_(), k = in.k.clone().requires_grad_(), v = in.v.clone().requires_grad_();
  for (auto* w : {&in.w_q, &in.w_k, &in.w_v}) w->requires_grad_();
  for (auto _ : state) {
    for (auto* t : {&q, &k, &v, &in.w_q, &in.w_k, &in.w_v}) t->mutable_grad() = torch::Tensor();
    in.forward(q, k, v).backward(in.g);
    benchmark::DoNotOptimize(q.grad().data_ptr());
  }
  for (auto* w : {&in.w_q, &in.w_k, &in.w_v}) w->requires_grad_(false);
}
void libtorch_masked_softmax(benchmark::State& state) {
  torch::NoGradGuard const no_grad;
  auto& in = torch_inputs::get();
  for (auto _ : state) {
    auto const w = dimtensor_bench::masked_softmax(in.scores.clone(), in.scores_lens);
    benchmark::DoNotOptimize(w.data_ptr());
  }
}
#endif

/// The libraries agree on the dot-product outputs (1e-4, absolute).
bool results_agree() {
#if DIMTENSOR_HAVE_LIBTORCH
  dt::autograd::no_grad const no_grad;
  torch::NoGradGuard const torch_no_grad;
  auto& in = inputs::get();
  auto& tin = torch_inputs::get();
  auto const worst = [](auto const& mine, torch::Tensor const& theirs) {
    return (dimtensor_bench::to_torch(mine) - theirs).abs().max().template item<double>();
  };
  return dimtensor_bench::agrees(
             "dot_fwd_1d",
             worst(forward(in.lens1), dimtensor_bench::dot_product_attention(tin.q, tin.k, tin.v, tin.lens1)), 1e-4) &&
         dimtensor_bench::agrees(
             "dot_fwd_2d",
             worst(forward(in.lens2), dimtensor_bench::dot_product_attention(tin.q, tin.k, tin.v, tin.lens2)), 1e-4);
#else
  return true;
#endif
}

/// Writes the inputs and dimtensor's outputs as .npy files under @p dir.
void write_inputs(std::filesystem::path const& dir) {
  dt::autograd::no_grad const no_grad;
  auto& in = inputs::get();
  std::filesystem::create_directories(dir);
  dt::save_npy(dir / "q.npy", in.q);
  dt::save_npy(dir / "k.npy", in.k);
  dt::save_npy(dir / "v.npy", in.v);
  dt::save_npy(dir / "g.npy", in.g);
  dt::save_npy(dir / "lens1.npy", in.lens1);
  dt::save_npy(dir / "lens2.npy", in.lens2);
  dt::save_npy(dir / "scores.npy", in.scores);
  dt::save_npy(dir / "scores_lens.npy", in.scores_lens);
  dt::save_npy(dir / "out_1d.npy", forward(in.lens1));
  dt::save_npy(dir / "out_2d.npy", forward(in.lens2));
  auto& mha = mha_inputs::get();
  dt::save_npy(dir / "mha_x.npy", mha.x);
  dt::save_npy(dir / "mha_y.npy", mha.y);
  dt::save_npy(dir / "mha_g.npy", mha.g);
  dt::save_npy(dir / "mha_lens.npy", mha.lens);
  dt::save_npy(dir / "mha_w_q.npy", mha.attention.W_q.weight);
  dt::save_npy(dir / "mha_w_k.npy", mha.attention.W_k.weight);
  dt::save_npy(dir / "mha_w_v.npy", mha.attention.W_v.weight);
  dt::save_npy(dir / "mha_w_o.npy", mha.attention.W_o.weight);
  dt::save_npy(dir / "mha_out.npy", mha_forward<false>(mha, mha.x, mha.y));
  auto& add = additive_inputs::get();
  dt::save_npy(dir / "add_q.npy", add.q);
  dt::save_npy(dir / "add_k.npy", add.k);
  dt::save_npy(dir / "add_v.npy", add.v);
  dt::save_npy(dir / "add_g.npy", add.g);
  dt::save_npy(dir / "add_lens.npy", add.lens);
  dt::save_npy(dir / "add_w_q.npy", add.attention.W_q.weight);
  dt::save_npy(dir / "add_w_k.npy", add.attention.W_k.weight);
  dt::save_npy(dir / "add_w_v.npy", add.attention.w_v.weight);
  dt::save_npy(dir / "add_out.npy", add.attention(add.q, add.k, add.v, add.lens));
  for (dt::index_t n : {50, 4096}) {
    auto& nwi = nw_inputs::get(n);
    std::string const tag = std::to_string(n);
    dt::save_npy(dir / ("nw_" + tag + "_x_test.npy"), nwi.x_test);
    dt::save_npy(dir / ("nw_" + tag + "_keys.npy"), nwi.keys);
    dt::save_npy(dir / ("nw_" + tag + "_values.npy"), nwi.values);
    dt::save_npy(dir / ("nw_" + tag + "_out.npy"),
                 dt::nn::nadaraya_watson<Train>(nwi.x_test, nwi.keys, nwi.values, nwi.w));
  }
}

long status_kb(char const* field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
  }
  return -1;
}

/// Runs the case @p name once after its inputs exist and prints the
/// resident memory it added at its peak; false for an unknown name.
bool measure_memory(std::string const& name) {
  dt::autograd::no_grad const no_grad;
  auto& in = inputs::get();
  std::function<void()> run;
  std::unique_ptr<sweep_inputs> sweep;
  if (name == "dot_fwd_1d") {
    run = [&] { benchmark::DoNotOptimize(forward(in.lens1).data()); };
  } else if (name == "dot_fwd_2d") {
    run = [&] { benchmark::DoNotOptimize(forward(in.lens2).data()); };
  } else if (name == "mha_fwd" || name == "mha_fwd_d2l") {
    auto& mha = mha_inputs::get();
    bool const d2l = name == "mha_fwd_d2l";
    run = [&mha, d2l] {
      benchmark::DoNotOptimize(d2l ? mha_forward<true>(mha, mha.x, mha.y).data()
                                   : mha_forward<false>(mha, mha.x, mha.y).data());
    };
  } else if (name == "additive_fwd") {
    auto& add = additive_inputs::get();
    run = [&add] { benchmark::DoNotOptimize(add.attention(add.q, add.k, add.v, add.lens).data()); };
#if DIMTENSOR_HAVE_LIBTORCH
  } else if (name == "libtorch_additive_fwd") {
    auto& add = torch_additive::get();
    run = [&add] {
      torch::NoGradGuard const torch_no_grad;
      benchmark::DoNotOptimize(add.forward(add.q, add.k, add.v).data_ptr());
    };
#endif
  } else if (name == "masked_softmax") {
    run = [&] { benchmark::DoNotOptimize(dt::masked_softmax<KVPairs>(in.scores, in.scores_lens).data()); };
  } else if (name.rfind("sweep/", 0) == 0) {
    sweep = std::make_unique<sweep_inputs>(std::stol(name.substr(6)));
    run = [&] {
      dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention{0.0};
      attention.eval();
      benchmark::DoNotOptimize(attention(sweep->q, sweep->k, sweep->v).data());
    };
  } else {
    return false;
  }
  long const before = status_kb("VmRSS:");
  { std::ofstream("/proc/self/clear_refs") << "5"; }  // the peak (VmHWM) starts again from here
  run();
  long const peak = status_kb("VmHWM:");
  std::printf("peak_extra_mib %.2f\n", static_cast<double>(peak - before) / 1024.0);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (char const* name = std::getenv("DIMTENSOR_BENCH_MEMORY")) {
    if (char const* env = std::getenv("DIMTENSOR_BENCH_THREADS"); env != nullptr && std::atoi(env) > 0) {
      dt::set_num_threads(std::atoi(env));
    }
    if (!measure_memory(name)) {
      std::fprintf(stderr, "suite_bench: no memory case named %s\n", name);
      return 1;
    }
    return 0;
  }
  if (char const* dir = std::getenv("DIMTENSOR_BENCH_INPUTS")) write_inputs(dir);
  dimtensor_bench::register_timed("dimtensor/dot_fwd_1d", dimtensor_dot_fwd_1d);
  dimtensor_bench::register_timed("dimtensor/dot_fwd_2d", dimtensor_dot_fwd_2d);
  dimtensor_bench::register_timed("dimtensor/dot_fwdbwd_1d", dimtensor_dot_fwdbwd_1d);
  dimtensor_bench::register_timed("dimtensor/dot_fwdbwd_2d", dimtensor_dot_fwdbwd_2d);
  dimtensor_bench::register_timed("dimtensor/masked_softmax", dimtensor_masked_softmax);
  for (dt::index_t length = 128; length <= 8192; length *= 2) {
    benchmark::RegisterBenchmark("dimtensor/sweep", dimtensor_sweep)
        ->Arg(length)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  dimtensor_bench::register_timed("dimtensor/mha_fwd", dimtensor_mha_fwd);
  dimtensor_bench::register_timed("dimtensor/mha_fwd_d2l", dimtensor_mha_fwd_d2l);
  dimtensor_bench::register_timed("dimtensor/mha_fwdbwd", dimtensor_mha_fwdbwd);
  dimtensor_bench::register_timed("dimtensor/mha_fwdbwd_d2l", dimtensor_mha_fwdbwd_d2l);
  dimtensor_bench::register_timed("dimtensor/additive_fwd", dimtensor_additive_fwd);
  dimtensor_bench::register_timed("dimtensor/additive_fwdbwd", dimtensor_additive_fwdbwd);
  dimtensor_bench::register_timed("dimtensor/nw_50", dimtensor_nw_50);
  dimtensor_bench::register_timed("dimtensor/nw_4096", dimtensor_nw_4096);
  dimtensor_bench::register_timed("dimtensor/toy_masked_softmax", dimtensor_toy_masked_softmax);
  dimtensor_bench::register_timed("dimtensor/toy_additive", dimtensor_toy_additive);
  dimtensor_bench::register_timed("dimtensor/toy_dot", dimtensor_toy_dot);
  dimtensor_bench::register_timed("dimtensor/toy_mha", dimtensor_toy_mha);
#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
  dimtensor_bench::register_timed("blas/sgemm", blas_sgemm);
  dimtensor_bench::register_timed("blas/toy_projections_xwt", blas_toy_projections_xwt);
  dimtensor_bench::register_timed("blas/toy_projections_wt", blas_toy_projections_wt);
#endif
#if DIMTENSOR_HAVE_LIBTORCH
  dimtensor_bench::register_timed("libtorch/dot_fwd_1d", libtorch_dot_fwd_1d);
  dimtensor_bench::register_timed("libtorch/dot_fwd_2d", libtorch_dot_fwd_2d);
  dimtensor_bench::register_timed("libtorch/dot_fwdbwd_1d", libtorch_dot_fwdbwd_1d);
  dimtensor_bench::register_timed("libtorch/dot_fwdbwd_2d", libtorch_dot_fwdbwd_2d);
  dimtensor_bench::register_timed("libtorch/masked_softmax", libtorch_masked_softmax);
  dimtensor_bench::register_timed("libtorch/additive_fwd", libtorch_additive_fwd);
  dimtensor_bench::register_timed("libtorch/additive_fwdbwd", libtorch_additive_fwdbwd);
#endif
  return dimtensor_bench::run_main(argc, argv, results_agree);
}
