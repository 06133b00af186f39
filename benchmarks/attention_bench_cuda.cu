// The attention modules on dimtensor::cuda (Google Benchmark), the shapes of
// attention_bench.cpp:
//   cuda/dot_product           queries, keys, values [16, 512, 64], 1-D valid_lens
//   cuda/multi_head/named      X = Y [16, 128, 512], 8 heads, 1-D valid_lens (forward)
//   cuda/multi_head/d2l_form   the same through forward_d2l (transpose_qkv)
//   cuda/multi_head_train/...  X, Y [16, 512, 512], 8 heads of 64: forward and
//                              backward of sum(out * G), every gradient
// Forward passes run without recording (autograd::no_grad). Every iteration
// ends with cudaDeviceSynchronize(), inside the timed region, and times are
// wall-clock (UseRealTime) in milliseconds. bytes_per_second counts the
// least memory traffic the computation needs (each input read once, each
// output written once, and the [.., Queries, KVPairs] scores written and read
// once), so it is a lower bound of the bandwidth used, not a roofline.
//
// Before timing, dot_product's output is compared with the CPU backend's on
// the same inputs (max |cuda - cpu| printed; > 1e-4 fails). Without a CUDA
// device the program prints "SKIPPED: no CUDA device (...)" and exits with
// 0; listing (--benchmark_list_tests) needs no device.
#include <benchmark/benchmark.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <dimtensor/backends/thrust.hpp>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/ops/to.hpp>

namespace {

namespace dt = dimtensor;
using device = dt::cuda;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);

template <class... Specs>
using gpu = dt::basic_tensor<device, float, Specs...>;
using lens_t = dt::basic_tensor<device, std::int64_t, Batch>;

constexpr double float_bytes = sizeof(float);

void synchronize() {
  cudaError_t const status = cudaDeviceSynchronize();
  if (status != cudaSuccess) {
    std::fprintf(stderr, "attention_bench_cuda: %s\n", cudaGetErrorString(status));
    std::exit(1);
  }
}

// Inputs drawn on the host from a seed, moved to the device once.
template <class Tensor>
auto to_device(Tensor const& t) {
  return dt::to<device>(t);
}

dt::basic_tensor<dt::cpu, std::int64_t, Batch> random_lens(dt::generator& gen, dt::index_t batch, dt::index_t max_len) {
  return dt::randint<std::int64_t>(gen, 1, max_len + 1, Batch(batch));
}

// ---------------------------------------------------------------------------
// Scaled dot-product attention.
struct dot_inputs {
  static constexpr dt::index_t batch = 16, queries = 512, kv = 512, d = 64;
  dt::generator gen{11};
  dt::basic_tensor<dt::cpu, float, Batch, Queries, Hidden> q_host =
      dt::randn<float>(gen, Batch(batch), Queries(queries), Hidden(d));
  dt::basic_tensor<dt::cpu, float, Batch, KVPairs, Hidden> k_host =
      dt::randn<float>(gen, Batch(batch), KVPairs(kv), Hidden(d));
  dt::basic_tensor<dt::cpu, float, Batch, KVPairs, ValueFeat> v_host =
      dt::randn<float>(gen, Batch(batch), KVPairs(kv), ValueFeat(d));
  dt::basic_tensor<dt::cpu, std::int64_t, Batch> lens_host = random_lens(gen, batch, kv);
  gpu<Batch, Queries, Hidden> q = to_device(q_host);
  gpu<Batch, KVPairs, Hidden> k = to_device(k_host);
  gpu<Batch, KVPairs, ValueFeat> v = to_device(v_host);
  lens_t lens = to_device(lens_host);
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden, float, device> attention{0.0};

  static dot_inputs& get() {
    static dot_inputs in;
    return in;
  }
  static double bytes() {
    return float_bytes * (3.0 * batch * queries * d + batch * queries * d + 2.0 * batch * queries * kv);
  }
};

void cuda_dot_product(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = dot_inputs::get();
  for (auto _ : state) {
    auto const r = in.attention(in.q, in.k, in.v, in.lens);
    synchronize();
    benchmark::DoNotOptimize(r.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * dot_inputs::bytes()));
}

// ---------------------------------------------------------------------------
// Multi-head attention, forward.
using mha_t = dt::nn::multi_head_attention<Queries, KVPairs, Hidden, Hidden, Hidden, Hidden, float, device>;

struct multi_head_inputs {
  static constexpr dt::index_t batch = 16, length = 128, hidden = 512, heads = 8;
  dt::generator gen{13};
  gpu<Batch, Queries, Hidden> x = to_device(dt::randn<float>(gen, Batch(batch), Queries(length), Hidden(hidden)));
  gpu<Batch, KVPairs, Hidden> y = to_device(dt::randn<float>(gen, Batch(batch), KVPairs(length), Hidden(hidden)));
  lens_t lens = to_device(random_lens(gen, batch, length));
  mha_t attention{Hidden(hidden), Hidden(hidden), Hidden(hidden), Hidden(hidden), dt::nn::Heads(heads), 0.0, false,
                  gen};

  static multi_head_inputs& get() {
    static multi_head_inputs in;
    return in;
  }
  // X and Y read, four projections written and read, the output written, the
  // weights [Batch, Heads, Queries, KVPairs] written and read, the 4 weight matrices read.
  static double bytes() {
    double const act = double(batch) * length * hidden;
    return float_bytes * (2 * act + 2 * 4 * act + act + 2.0 * batch * heads * length * length + 4.0 * hidden * hidden);
  }
};

void cuda_multi_head(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = multi_head_inputs::get();
  for (auto _ : state) {
    auto const r = in.attention(in.x, in.y, in.y, in.lens);
    synchronize();
    benchmark::DoNotOptimize(r.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * multi_head_inputs::bytes()));
}

void cuda_multi_head_d2l_form(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = multi_head_inputs::get();
  for (auto _ : state) {
    auto const r = in.attention.forward_d2l(in.x, in.y, in.y, in.lens);
    synchronize();
    benchmark::DoNotOptimize(r.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * multi_head_inputs::bytes()));
}

// ---------------------------------------------------------------------------
// Multi-head attention, one training step: forward and backward.
struct multi_head_train_inputs {
  static constexpr dt::index_t batch = 16, length = 512, hidden = 512, heads = 8;
  dt::generator gen{17};
  gpu<Batch, Queries, Hidden> x = to_device(dt::randn<float>(gen, Batch(batch), Queries(length), Hidden(hidden)));
  gpu<Batch, KVPairs, Hidden> y = to_device(dt::randn<float>(gen, Batch(batch), KVPairs(length), Hidden(hidden)));
  gpu<Batch, Queries, Hidden> g = to_device(dt::randn<float>(gen, Batch(batch), Queries(length), Hidden(hidden)));
  lens_t lens = to_device(random_lens(gen, batch, length));
  mha_t attention{Hidden(hidden), Hidden(hidden), Hidden(hidden), Hidden(hidden), dt::nn::Heads(heads), 0.0, false,
                  gen};

  multi_head_train_inputs() {
    x.requires_grad_();
    y.requires_grad_();
  }
  template <class Forward>
  void step(Forward forward) {
    x.zero_grad();
    y.zero_grad();
    attention.for_each_parameter([](auto const&, auto& p) { p.zero_grad(); });
    auto const out = forward(*this);
    out.backward(g);
  }
  static multi_head_train_inputs& get() {
    static multi_head_train_inputs in;
    return in;
  }
  // The forward pass's traffic, then the backward's: about twice it again.
  static double bytes() {
    double const act = double(batch) * length * hidden;
    double const forward =
        2 * act + 2 * 4 * act + act + 2.0 * batch * heads * length * length + 4.0 * hidden * hidden;
    return float_bytes * 3 * forward;
  }
};

void cuda_multi_head_train(benchmark::State& state) {
  auto& in = multi_head_train_inputs::get();
  for (auto _ : state) {
    in.step([](auto& i) { return dt::eval(i.attention(i.x, i.y, i.y, i.lens)); });
    synchronize();
    benchmark::DoNotOptimize(in.x.grad().data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * multi_head_train_inputs::bytes()));
}

void cuda_multi_head_train_d2l_form(benchmark::State& state) {
  auto& in = multi_head_train_inputs::get();
  for (auto _ : state) {
    in.step([](auto& i) { return dt::eval(i.attention.forward_d2l(i.x, i.y, i.y, i.lens)); });
    synchronize();
    benchmark::DoNotOptimize(in.x.grad().data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * multi_head_train_inputs::bytes()));
}

// dot_product on the device against the CPU backend on the same inputs.
bool results_agree() {
  dt::autograd::no_grad const no_grad;
  auto& in = dot_inputs::get();
  auto const on_gpu = dt::to<dt::cpu>(in.attention(in.q, in.k, in.v, in.lens));
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden, float, dt::cpu> reference{0.0};
  auto const on_cpu = reference(in.q_host, in.k_host, in.v_host, in.lens_host);
  double const diff = dt::max_abs_diff(on_gpu, on_cpu);
  std::printf("attention_bench_cuda: dot_product, max |cuda - cpu| = %g\n", diff);
  return diff <= 1e-4;
}

bool only_lists(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view const arg = argv[i];
    if (arg.rfind("--benchmark_list_tests", 0) == 0 && arg != "--benchmark_list_tests=false") return true;
    if (arg == "--help") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  auto const timed = [](char const* name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name, fn)->UseRealTime()->Unit(benchmark::kMillisecond);
  };
  timed("cuda/dot_product", cuda_dot_product);
  timed("cuda/multi_head/named", cuda_multi_head);
  timed("cuda/multi_head/d2l_form", cuda_multi_head_d2l_form);
  timed("cuda/multi_head_train/named", cuda_multi_head_train);
  timed("cuda/multi_head_train/d2l_form", cuda_multi_head_train_d2l_form);

  bool const listing = only_lists(argc, argv);  // before Initialize, which removes the flags it knows
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!listing) {
    int count = 0;
    cudaError_t const status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      std::printf("SKIPPED: no CUDA device (%s)\n",
                  cudaGetErrorString(status != cudaSuccess ? status : cudaErrorNoDevice));
      return 0;
    }
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, 0) == cudaSuccess) {
      std::printf("attention_bench_cuda: %s (compute capability %d.%d)\n", properties.name, properties.major,
                  properties.minor);
    }
    if (!results_agree()) {
      std::fprintf(stderr, "attention_bench_cuda: the device's results differ from the CPU's; not timing\n");
      return 1;
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
