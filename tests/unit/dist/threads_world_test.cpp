// The collectives and the data-parallel gradients on the thread world
// (dist/threads.hpp), each against a computation by hand
// (unit/support/dist_cases.hpp, which the MPI test runs too), and what the
// thread world alone does: a rank that throws or returns early aborts the
// others.  Catch2's assertions are not thread-safe, so every rank records
// what it got and the checks run after run_threads has joined the ranks.
//
// Also built under ThreadSanitizer (tests/tsan, without OpenMP).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>

#include "unit/support/dist_cases.hpp"

namespace dt = dimtensor;
namespace dist = dimtensor::dist;

namespace threads_world_test {

DIMTENSOR_DIM(Row);

// Runs f(comm) on @p ranks threads and returns what each rank's call returned.
template <class F>
auto on_threads(int ranks, F const& f) {
  std::vector<decltype(f(std::declval<dist::communicator const&>()))> got(static_cast<std::size_t>(ranks));
  dist::run_threads(ranks, [&](dist::communicator comm) { got[static_cast<std::size_t>(comm.rank())] = f(comm); });
  return got;
}

TEST_CASE("thread world: all_reduce sums, averages, and takes the largest and smallest", "[dist][threads]") {
  for (int ranks : {2, 3}) {
    auto const got = on_threads(ranks, dist_cases::run_reduce);
    for (auto const& g : got) dist_cases::check_reduce(g, ranks);
  }
}

TEST_CASE("thread world: broadcast from any root, all_gather and reduce_scatter along a named dim",
          "[dist][threads]") {
  for (int ranks : {2, 3}) {
    auto const got = on_threads(ranks, dist_cases::run_move);
    for (int r = 0; r < ranks; ++r) dist_cases::check_move(got[static_cast<std::size_t>(r)], r, ranks);
  }
}

TEST_CASE("thread world: ranks that bring different tensors or models all throw, naming the dims and the ranks",
          "[dist][threads]") {
  for (int ranks : {2, 3}) {
    auto const got = on_threads(ranks, dist_cases::run_mismatches);
    for (auto const& g : got) dist_cases::check_mismatches(g, ranks);
  }
}

TEST_CASE("thread world: split makes groups by color, ordered by key", "[dist][threads]") {
  for (int ranks : {2, 4}) {
    auto const got = on_threads(ranks, dist_cases::run_split);
    for (int r = 0; r < ranks; ++r) dist_cases::check_split(got[static_cast<std::size_t>(r)], r, ranks);
  }
}

TEST_CASE("thread world: a batch sharded in the type, its reductions completed by all_reduce, gathered whole",
          "[dist][threads]") {
  for (int ranks : {2, 3}) {
    auto const got = on_threads(ranks, dist_cases::run_typed);
    for (int r = 0; r < ranks; ++r) dist_cases::check_typed(got[static_cast<std::size_t>(r)], r, ranks);
  }
}

TEST_CASE("thread world: data_parallel reduces buckets during the backward pass, and not inside no_sync",
          "[dist][threads]") {
  for (int ranks : {2, 3}) {
    auto const got = on_threads(ranks, dist_cases::run_overlap);
    for (auto const& g : got) dist_cases::check_overlap(g);
  }
}

TEST_CASE("thread world: broadcast_parameters, then ranks with parts of the batch give the whole batch's gradient",
          "[dist][threads]") {
  std::vector<double> weight_grad;
  std::vector<double> bias_grad;
  std::vector<double> const start = dist_cases::reference_gradients(weight_grad, bias_grad);
  for (int ranks : {2, 3, 4}) {
    auto const got = on_threads(ranks, [&](dist::communicator const& comm) {
      return dist_cases::run_gradients(comm, start);
    });
    for (auto const& g : got) dist_cases::check_gradients(g, start, weight_grad, bias_grad, ranks);
  }
}

TEST_CASE("thread world: a rank that throws, or returns early, aborts the others instead of hanging",
          "[dist][threads]") {
  std::string other;
  SECTION("a rank throws: run_threads rethrows its exception, the other's collective throws aborted_error") {
    REQUIRE_THROWS_WITH(dist::run_threads(2,
                                          [&](dist::communicator comm) {
                                            if (comm.rank() == 1) throw std::runtime_error("out of data");
                                            try {
                                              dt::tensor<float, Row> x(Row(2));
                                              dist::all_reduce(x, comm);
                                            } catch (dist::aborted_error const& e) {
                                              other = e.what();
                                              throw;
                                            }
                                          }),
                        "out of data");
    CHECK(other == "dist (threads): the group was aborted: rank 1 of 2 failed: out of data");
  }
  SECTION("a rank returns while the other waits for it") {
    REQUIRE_THROWS_AS(dist::run_threads(2,
                                        [&](dist::communicator comm) {
                                          if (comm.rank() == 0) return;
                                          try {
                                            comm.barrier();
                                          } catch (dist::aborted_error const& e) {
                                            other = e.what();
                                            throw;
                                          }
                                        }),
                      dist::aborted_error);
    CHECK(other == "dist (threads): the group was aborted: rank 0 returned while rank 1 waited for it in a "
                   "collective (every rank makes the same collectives)");
  }
  REQUIRE_THROWS_WITH(dist::run_threads(0, [](dist::communicator) {}),
                      "dist::run_threads: the number of ranks must be >= 1, got 0");
}

}  // namespace threads_world_test
