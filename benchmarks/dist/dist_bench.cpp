// dimtensor::dist under mpirun: the all-reduce of the library against
// MPI_Allreduce on the same buffers, and one epoch of d2l's Transformer
// trained data-parallel (examples/distributed_translation/training.hpp).
//
//   mpirun -np 2 -x OMP_NUM_THREADS=1 bench_dist_bench [--benchmark_filter=...]
//   OMP_NUM_THREADS=2 bench_dist_bench --benchmark_filter=epoch     (1 process, 2 threads)
//
// Benchmarks (real time per iteration; rank 0 reports):
//   mpi/all_reduce/<bytes>            MPI_Allreduce(MPI_IN_PLACE, floats, MPI_SUM)
//   dimtensor/all_reduce/<bytes>      dist::all_reduce of a float tensor: the ranks'
//                                     shapes compared (one all-gather of 192 bytes),
//                                     then the same MPI_Allreduce
//   dimtensor/gradients/<bytes>       dist::all_reduce_gradients of one parameter of
//                                     that size: the models compared, the has-gradient
//                                     flags combined, the gradient copied into a bucket,
//                                     reduced and copied back
//   dimtensor/transformer_epoch       one epoch of the translation Transformer (d2l's
//                                     settings, batches of 64) over the ranks
// Every rank runs the same fixed number of iterations (Google Benchmark
// would otherwise choose a count per process, and the collectives would
// not meet); 5 repetitions, their median reported.
#include <benchmark/benchmark.h>

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
#include <dimtensor/dist/mpi.hpp>

#include "../../examples/distributed_translation/training.hpp"

namespace dt = dimtensor;
namespace dist = dimtensor::dist;
namespace dtr = distributed_translation;

namespace {

DIMTENSOR_DIM(Elem);

std::unique_ptr<dist::communicator> world;

// Iterations for a buffer of @p bytes: about 64 MiB moved per repetition, 10 at least.
std::int64_t iterations_for(std::int64_t bytes) {
  std::int64_t const n = (std::int64_t{64} << 20) / bytes;
  return n < 10 ? 10 : (n > 2000 ? 2000 : n);
}

void mpi_all_reduce(benchmark::State& state) {
  auto const n = static_cast<std::size_t>(state.range(0)) / sizeof(float);
  std::vector<float> x(n, 1.0f);
  for (auto _ : state) {
    MPI_Allreduce(MPI_IN_PLACE, x.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void dimtensor_all_reduce(benchmark::State& state) {
  auto const n = state.range(0) / static_cast<std::int64_t>(sizeof(float));
  auto x = dt::ones<float>(Elem(n));
  for (auto _ : state) {
    dist::all_reduce(x, *world);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void dimtensor_gradients(benchmark::State& state) {
  auto const n = state.range(0) / static_cast<std::int64_t>(sizeof(float));
  auto w = dt::ones<float>(Elem(n));
  w.requires_grad_();
  dt::sum(w).backward();  // a gradient of ones
  dt::optim::parameter_list const params(w);
  for (auto _ : state) {
    dist::all_reduce_gradients(params, *world);
    benchmark::DoNotOptimize(w.grad().data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void transformer_epoch(benchmark::State& state) {
  static dtr::dataset_t const data(DIMTENSOR_EXAMPLES_DATA_DIR "/fra-eng/fra.txt",
                                   {.num_steps = 10, .num_examples = 600});
  dtr::SrcVocab const src(static_cast<dt::index_t>(data.src_vocab().size()));
  dtr::TgtVocab const tgt(static_cast<dt::index_t>(data.tgt_vocab().size()));
  dt::generator gen(static_cast<std::uint64_t>(world->rank()));
  dtr::transformer_t<> net({src, dtr::Hidden(32), dtr::FFNHidden(64), 4, 2, 0.1, false, gen},
                           {tgt, dtr::Hidden(32), dtr::FFNHidden(64), 4, 2, 0.1, gen});
  dtr::init_weights(net, gen);
  dist::broadcast_parameters(net, *world);
  dt::optim::adam optimizer(net, 0.005);
  dt::generator shuffle(1);
  net.train();
  double loss = 0;
  for (auto _ : state) loss = dtr::train_epoch(net, optimizer, data, 64, shuffle, *world);
  state.counters["loss"] = loss;
  state.counters["ranks"] = world->size();
  state.counters["parameters"] = static_cast<double>(dt::nn::parameter_count(net));
}

void register_all() {
  for (std::int64_t bytes : {std::int64_t{4} << 10, std::int64_t{64} << 10, std::int64_t{1} << 20,
                             std::int64_t{4} << 20, std::int64_t{16} << 20, std::int64_t{64} << 20}) {
    std::int64_t const it = iterations_for(bytes);
    benchmark::RegisterBenchmark("mpi/all_reduce", mpi_all_reduce)->Arg(bytes)->Iterations(it)->Repetitions(5)
        ->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("dimtensor/all_reduce", dimtensor_all_reduce)->Arg(bytes)->Iterations(it)
        ->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("dimtensor/gradients", dimtensor_gradients)->Arg(bytes)->Iterations(it)
        ->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("dimtensor/transformer_epoch", transformer_epoch)->Iterations(3)->Repetitions(3)
      ->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond);
}

// The other ranks run the same benchmarks and report nothing.
class silent_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(Context const&) override { return true; }
  void ReportRuns(std::vector<Run> const&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  dist::mpi_world mpi(argc, argv);
  world = std::make_unique<dist::communicator>(mpi.world());
  benchmark::AddCustomContext("dist_ranks", std::to_string(world->size()));
  char const* threads = std::getenv("OMP_NUM_THREADS");
  benchmark::AddCustomContext("omp_num_threads", threads != nullptr ? threads : "(default)");
  register_all();
  benchmark::Initialize(&argc, argv);
  if (world->rank() == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    silent_reporter quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  benchmark::Shutdown();
  world.reset();
  return 0;
}
