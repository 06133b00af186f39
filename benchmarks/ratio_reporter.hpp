// The main() of the dimtensor benchmarks: Google Benchmark's console output,
// then the speed of dimtensor relative to libtorch in the same run.
//
// Benchmarks are named "<library>/<case>[/<variant>]" with library
// "dimtensor" or "libtorch" (e.g. dimtensor/tanh_add_mul/assign,
// libtorch/tanh_add_mul).  After the runs, every dimtensor benchmark is
// compared with every libtorch benchmark of the same case, as
// libtorch time / dimtensor time per iteration (real time; > 1 means
// dimtensor is faster).
//
// Threads: both libraries use the same count, DIMTENSOR_BENCH_THREADS from
// the environment when set, else OpenMP's default.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <dimtensor/backends/cpu/blas.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>

#if DIMTENSOR_HAVE_LIBTORCH
#include <torch/torch.h>
#endif

#include <string>

#include <dimtensor/backends/cpu/dispatch.hpp>

// The context every benchmark prints before its table: the instruction-set
// level of the runtime's CPU kernels that ran (DIMTENSOR_CPU_ISA forces
// one), and whether this program was compiled with -march=native
// (DIMTENSOR_BENCH_NATIVE) or as a user's program is, with no flags.
inline bool const dimtensor_bench_context = [] {
  benchmark::AddCustomContext("dimtensor_cpu_isa",
                              std::string(dimtensor::backends::cpu::isa_name(dimtensor::backends::cpu::isa_active())));
#if defined(DIMTENSOR_BENCH_NATIVE_BUILD)
  benchmark::AddCustomContext("dimtensor_build", "-march=native");
#else
  benchmark::AddCustomContext("dimtensor_build", "default (no -march)");
#endif
  return true;
}();

namespace dimtensor_bench {

/// Console output plus the collected real time per iteration of each benchmark.
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  // Colour only on a terminal (a custom reporter does not see --benchmark_color).
  ratio_reporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(std::vector<Run> const& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (auto const& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred || run.iterations == 0) continue;
      auto& [seconds, iterations] = times_[base_name(run.benchmark_name())];
      seconds += run.real_accumulated_time;
      iterations += static_cast<double>(run.iterations);
    }
  }

  /// Prints libtorch time / dimtensor time for every pair of the same case.
  void print_ratios() const {
    bool header = false;
    for (auto const& [name, dt_time] : times_) {
      if (name.rfind("dimtensor/", 0) != 0) continue;
      std::string const rest = name.substr(10);
      std::string const case_name = rest.substr(0, rest.find('/'));
      for (auto const& [other, torch_time] : times_) {
        if (other != "libtorch/" + case_name && other.rfind("libtorch/" + case_name + "/", 0) != 0) continue;
        if (!header) {
          std::printf("\nlibtorch time / dimtensor time (same run, real time per iteration; > 1: dimtensor faster)\n");
          header = true;
        }
        double const t_dt = dt_time.first / dt_time.second;
        double const t_torch = torch_time.first / torch_time.second;
        std::printf("  %-44s vs %-36s %6.2fx   (%.3f ms vs %.3f ms)\n", name.c_str(), other.c_str(), t_torch / t_dt,
                    t_dt * 1e3, t_torch * 1e3);
      }
    }
    if (!header) std::printf("\n(no libtorch peers in this run: no ratios)\n");
  }

 private:
  // "dimtensor/bmm/real_time" -> "dimtensor/bmm"
  static std::string base_name(std::string name) {
    auto const cut = name.find("/real_time");
    if (cut != std::string::npos) name.erase(cut);
    return name;
  }

  std::map<std::string, std::pair<double, double>> times_;  // name -> (seconds, iterations)
};

/// Sets the same thread count for dimtensor (OpenMP, OpenBLAS) and libtorch;
/// call it before either library computes anything (libtorch fixes its
/// count at its first parallel operation).
inline int set_threads() {
  if (char const* env = std::getenv("DIMTENSOR_BENCH_THREADS")) {
    int const n = std::atoi(env);
    if (n > 0) dimtensor::set_num_threads(n);
  }
  int const threads = dimtensor::get_num_threads();
  std::string text = std::to_string(threads);
#if DIMTENSOR_HAVE_LIBTORCH
  torch::set_num_threads(threads);
  text = "dimtensor " + text + ", libtorch " + std::to_string(torch::get_num_threads());
#endif
  benchmark::AddCustomContext("threads", text);
  // The BLAS chosen at configure time (DIMTENSOR_BLAS) and the kernel it
  // picked for this CPU (scripts/env.sh explains OPENBLAS_CORETYPE).
  benchmark::AddCustomContext("blas", dimtensor::backends::cpu::blas_description());
  return threads;
}

/// @brief Registers a benchmark timed in wall-clock milliseconds (all
/// pairs compare real time).
///
/// dimtensor sets its BLAS to one thread before its products (its OpenMP
/// threads share the work instead); libtorch calls the same BLAS when
/// dimtensor uses the system's OpenBLAS and expects its threads, so a
/// libtorch benchmark gets them back first.
inline void register_timed(char const* name, void (*fn)(benchmark::State&)) {
  if (std::string(name).rfind("libtorch/", 0) == 0) {
    benchmark::RegisterBenchmark(name,
                                 [fn](benchmark::State& state) {
                                   dimtensor::backends::cpu::detail::set_blas_threads(dimtensor::get_num_threads());
                                   fn(state);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    return;
  }
  benchmark::RegisterBenchmark(name, fn)->UseRealTime()->Unit(benchmark::kMillisecond);
}

/// Whether @p worst (largest difference from the reference) is within @p tol;
/// says so on stderr, naming @p bench, when it is not.
inline bool agrees(char const* bench, double worst, double tol) {
  if (worst > tol) {
    std::fprintf(stderr, "%s: dimtensor and the reference differ by %g\n", bench, worst);
    return false;
  }
  return true;
}

/// Runs the registered benchmarks, after @p check (which compares the
/// libraries' results) passes, then prints the ratios.
inline int run_main(int argc, char** argv, bool (*check)()) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--benchmark_list_tests", 0) == 0) listing = true;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  set_threads();
  if (!listing && !check()) return 1;
  ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (!listing) reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}

}  // namespace dimtensor_bench
