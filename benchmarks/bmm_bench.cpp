// Batched matrix products, [16, 512, 64] x [16, 64, 512] (dot-product attention's
// queries · keysᵀ at d2l-like sizes):
//   dimtensor/bmm                 bmm(q, k) with k stored [Batch, Hidden, KVPairs]
//   dimtensor/bmm/transposed      bmm(q, transpose<KVPairs, Hidden>(k)) with k stored
//                                 [Batch, KVPairs, Hidden]: a view, read as BLAS Trans
//   libtorch/bmm                  torch::bmm(q, k)
//   libtorch/bmm/transposed       torch::bmm(q, k.transpose(1, 2))
// The ratios at the end are libtorch time / dimtensor time (ratio_reporter.hpp).

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <random>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
#include <dimtensor/ops/transpose.hpp>

#include "ratio_reporter.hpp"

namespace {

namespace dt = dimtensor;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

constexpr dt::index_t n_batch = 16;
constexpr dt::index_t n_rows = 512;
constexpr dt::index_t n_inner = 64;
constexpr dt::index_t n_cols = 512;

template <class Tensor>
void fill(Tensor& t, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  for (dt::index_t i = 0; i < t.size(); ++i) t.data()[i] = dist(rng);
}

struct inputs {
  dt::tensor<float, Batch, Queries, Hidden> q = dt::empty<float>(Batch(n_batch), Queries(n_rows), Hidden(n_inner));
  dt::tensor<float, Batch, Hidden, KVPairs> k = dt::empty<float>(Batch(n_batch), Hidden(n_inner), KVPairs(n_cols));
  dt::tensor<float, Batch, KVPairs, Hidden> k_rows =
      dt::empty<float>(Batch(n_batch), KVPairs(n_cols), Hidden(n_inner));
#if DIMTENSOR_HAVE_LIBTORCH
  torch::Tensor tq, tk, tk_rows;
#endif

  inputs() {
    fill(q, 1);
    fill(k, 2);
    fill(k_rows, 3);
#if DIMTENSOR_HAVE_LIBTORCH
    tq = torch::from_blob(q.data(), {n_batch, n_rows, n_inner}, torch::kFloat32).clone();
    tk = torch::from_blob(k.data(), {n_batch, n_inner, n_cols}, torch::kFloat32).clone();
    tk_rows = torch::from_blob(k_rows.data(), {n_batch, n_cols, n_inner}, torch::kFloat32).clone();
#endif
  }

  static inputs const& get() {
    static inputs const in;
    return in;
  }
};

void set_counters(benchmark::State& state) {
  double const flops = 2.0 * n_batch * n_rows * n_inner * n_cols;
  state.counters["GFLOP"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

void dimtensor_bmm(benchmark::State& state) {
  auto const& in = inputs::get();
  for (auto _ : state) {
    auto const r = dt::bmm(in.q, in.k);
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_counters(state);
}

void dimtensor_bmm_transposed(benchmark::State& state) {
  auto const& in = inputs::get();
  for (auto _ : state) {
    auto const r = dt::bmm(in.q, dt::transpose<KVPairs, Hidden>(in.k_rows));
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_counters(state);
}

#if DIMTENSOR_HAVE_LIBTORCH
void libtorch_bmm(benchmark::State& state) {
  auto const& in = inputs::get();
  for (auto _ : state) {
    auto const r = torch::bmm(in.tq, in.tk);
    benchmark::DoNotOptimize(r.data_ptr());
    benchmark::ClobberMemory();
  }
  set_counters(state);
}

void libtorch_bmm_transposed(benchmark::State& state) {
  auto const& in = inputs::get();
  for (auto _ : state) {
    auto const r = torch::bmm(in.tq, in.tk_rows.transpose(1, 2));
    benchmark::DoNotOptimize(r.data_ptr());
    benchmark::ClobberMemory();
  }
  set_counters(state);
}
#endif

// dimtensor's products must be libtorch's (or a naive loop's), or the timing means nothing.
bool results_agree() {
  auto const& in = inputs::get();
  auto const r = dt::bmm(in.q, in.k);
  auto const rt = dt::bmm(in.q, dt::transpose<KVPairs, Hidden>(in.k_rows));
  double worst = 0;
#if DIMTENSOR_HAVE_LIBTORCH
  auto const t = torch::bmm(in.tq, in.tk).contiguous();
  auto const tt = torch::bmm(in.tq, in.tk_rows.transpose(1, 2)).contiguous();
  for (dt::index_t i = 0; i < r.size(); ++i) {
    worst = std::fmax(worst, std::fabs(r.data()[i] - t.data_ptr<float>()[i]));
    worst = std::fmax(worst, std::fabs(rt.data()[i] - tt.data_ptr<float>()[i]));
  }
#else
  for (dt::index_t b = 0; b < n_batch; b += 5) {
    for (dt::index_t i = 0; i < n_rows; i += 37) {
      for (dt::index_t j = 0; j < n_cols; j += 41) {
        double want = 0;
        double want_t = 0;
        for (dt::index_t p = 0; p < n_inner; ++p) {
          want += double(in.q(Batch(b), Queries(i), Hidden(p))) * in.k(Batch(b), Hidden(p), KVPairs(j));
          want_t += double(in.q(Batch(b), Queries(i), Hidden(p))) * in.k_rows(Batch(b), KVPairs(j), Hidden(p));
        }
        worst = std::fmax(worst, std::fabs(r(Batch(b), Queries(i), KVPairs(j)) - want));
        worst = std::fmax(worst, std::fabs(rt(Batch(b), Queries(i), KVPairs(j)) - want_t));
      }
    }
  }
#endif
  return dimtensor_bench::agrees("bmm_bench", worst, 1e-3);
}

}  // namespace

int main(int argc, char** argv) {
  dimtensor_bench::register_timed("dimtensor/bmm", dimtensor_bmm);
  dimtensor_bench::register_timed("dimtensor/bmm/transposed", dimtensor_bmm_transposed);
#if DIMTENSOR_HAVE_LIBTORCH
  dimtensor_bench::register_timed("libtorch/bmm", libtorch_bmm);
  dimtensor_bench::register_timed("libtorch/bmm/transposed", libtorch_bmm_transposed);
#endif
  return dimtensor_bench::run_main(argc, argv, results_agree);
}
