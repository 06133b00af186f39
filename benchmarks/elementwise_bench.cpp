// A fused elementwise chain, tanh(a + b) * c over 16M floats (16 * 1024 * 1024):
//   dimtensor/tanh_add_mul/assign  one fused pass into a preallocated output (out.assign)
//   dimtensor/tanh_add_mul/eval    one fused pass into a fresh result (eval; the
//                                  caching allocator hands back the same buffer)
//   libtorch/tanh_add_mul          torch::tanh(a + b) * c: three passes, three results
//   libtorch/tanh_add_mul/out      the same three passes into preallocated tensors
// The ratios at the end are libtorch time / dimtensor time (ratio_reporter.hpp).
// Build with -O3 -march=native: the fused loop is only as fast as its vector width.

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <dimtensor/dimtensor.hpp>

#include "ratio_reporter.hpp"

namespace {

namespace dt = dimtensor;

DIMTENSOR_DIM(Points);

constexpr dt::index_t n_points = 16 * 1024 * 1024;

struct inputs {
  dt::tensor<float, Points> a = dt::empty<float>(Points(n_points));
  dt::tensor<float, Points> b = dt::empty<float>(Points(n_points));
  dt::tensor<float, Points> c = dt::empty<float>(Points(n_points));
#if DIMTENSOR_HAVE_LIBTORCH
  torch::Tensor ta, tb, tc;
#endif

  inputs() {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
    for (dt::index_t i = 0; i < n_points; ++i) {
      a.data()[i] = dist(rng);
      b.data()[i] = dist(rng);
      c.data()[i] = dist(rng);
    }
#if DIMTENSOR_HAVE_LIBTORCH
    ta = torch::from_blob(a.data(), {n_points}, torch::kFloat32).clone();
    tb = torch::from_blob(b.data(), {n_points}, torch::kFloat32).clone();
    tc = torch::from_blob(c.data(), {n_points}, torch::kFloat32).clone();
#endif
  }

  static inputs const& get() {
    static inputs const in;
    return in;
  }
};

void set_counters(benchmark::State& state) {
  // 3 floats read and 1 written per element by a fused pass
  state.SetItemsProcessed(state.iterations() * n_points);
  state.SetBytesProcessed(state.iterations() * n_points * 4 * static_cast<std::int64_t>(sizeof(float)));
}

void dimtensor_assign(benchmark::State& state) {
  auto const& in = inputs::get();
  auto out = dt::empty<float>(Points(n_points));
  for (auto _ : state) {
    out.assign(dt::tanh(in.a + in.b) * in.c);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state);
}

void dimtensor_eval(benchmark::State& state) {
  auto const& in = inputs::get();
  for (auto _ : state) {
    auto const r = dt::eval(dt::tanh(in.a + in.b) * in.c);
    benchmark::DoNotOptimize(r.data());
    benchmark::ClobberMemory();
  }
  set_counters(state);
}

#if DIMTENSOR_HAVE_LIBTORCH
void libtorch_unfused(benchmark::State& state) {
  auto const& in = inputs::get();
  for (auto _ : state) {
    auto const r = torch::tanh(in.ta + in.tb) * in.tc;
    benchmark::DoNotOptimize(r.data_ptr());
    benchmark::ClobberMemory();
  }
  set_counters(state);
}

void libtorch_out(benchmark::State& state) {
  auto const& in = inputs::get();
  auto sum = torch::empty({n_points});
  auto th = torch::empty({n_points});
  auto r = torch::empty({n_points});
  for (auto _ : state) {
    torch::add_out(sum, in.ta, in.tb);
    torch::tanh_out(th, sum);
    torch::mul_out(r, th, in.tc);
    benchmark::DoNotOptimize(r.data_ptr());
    benchmark::ClobberMemory();
  }
  set_counters(state);
}
#endif

// The fused result must be what libtorch computes, or the timing means nothing.
bool results_agree() {
  auto const& in = inputs::get();
  auto const r = dt::eval(dt::tanh(in.a + in.b) * in.c);
  double worst = 0;
#if DIMTENSOR_HAVE_LIBTORCH
  auto const t = (torch::tanh(in.ta + in.tb) * in.tc).contiguous();
  float const* want = t.data_ptr<float>();
  for (dt::index_t i = 0; i < n_points; ++i) worst = std::fmax(worst, std::fabs(r.data()[i] - want[i]));
#else
  for (dt::index_t i = 0; i < n_points; i += 97) {
    float const want = std::tanh(in.a.data()[i] + in.b.data()[i]) * in.c.data()[i];
    worst = std::fmax(worst, std::fabs(r.data()[i] - want));
  }
#endif
  return dimtensor_bench::agrees("elementwise_bench", worst, 1e-5);
}

}  // namespace

int main(int argc, char** argv) {
  dimtensor_bench::register_timed("dimtensor/tanh_add_mul/assign", dimtensor_assign);
  dimtensor_bench::register_timed("dimtensor/tanh_add_mul/eval", dimtensor_eval);
#if DIMTENSOR_HAVE_LIBTORCH
  dimtensor_bench::register_timed("libtorch/tanh_add_mul", libtorch_unfused);
  dimtensor_bench::register_timed("libtorch/tanh_add_mul/out", libtorch_out);
#endif
  return dimtensor_bench::run_main(argc, argv, results_agree);
}
