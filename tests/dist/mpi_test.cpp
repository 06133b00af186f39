// The collectives and the data-parallel gradients over MPI, under
// `mpirun -np 2` (tests/dist/CMakeLists.txt): the same cases as the thread
// world's (unit/support/dist_cases.hpp), each rank checking its own.
#include <catch2/catch.hpp>

#include <vector>

#include <dimtensor/dist.hpp>

#include "unit/support/dist_cases.hpp"
#include "world.hpp"

namespace dist = dimtensor::dist;

namespace mpi_test {

TEST_CASE("mpi: the world", "[dist][mpi][collectives]") {
  dist::communicator const& comm = dist_test::world();
  CHECK(comm.transport_name() == "mpi");
  CHECK(comm.size() >= 2);
  CHECK(comm.rank() >= 0);
  CHECK(comm.rank() < comm.size());
}

TEST_CASE("mpi: all_reduce sums, averages, and takes the largest and smallest", "[dist][mpi][collectives]") {
  dist::communicator const& comm = dist_test::world();
  dist_cases::check_reduce(dist_cases::run_reduce(comm), comm.size());
}

TEST_CASE("mpi: broadcast, all_gather and reduce_scatter along a named dim", "[dist][mpi][collectives]") {
  dist::communicator const& comm = dist_test::world();
  dist_cases::check_move(dist_cases::run_move(comm), comm.rank(), comm.size());
}

TEST_CASE("mpi: ranks that bring different tensors or models all throw, naming the dims and the ranks",
          "[dist][mpi][collectives]") {
  dist::communicator const& comm = dist_test::world();
  dist_cases::check_mismatches(dist_cases::run_mismatches(comm), comm.size());
}

TEST_CASE("mpi: split makes groups by color, ordered by key", "[dist][mpi][collectives]") {
  dist::communicator const& comm = dist_test::world();
  dist_cases::check_split(dist_cases::run_split(comm), comm.rank(), comm.size());
}

TEST_CASE("mpi: a batch sharded in the type, its reductions completed by all_reduce, gathered whole",
          "[dist][mpi][collectives]") {
  dist::communicator const& comm = dist_test::world();
  dist_cases::check_typed(dist_cases::run_typed(comm), comm.rank(), comm.size());
}

TEST_CASE("mpi: data_parallel reduces buckets during the backward pass, and not inside no_sync",
          "[dist][mpi][data_parallel]") {
  dist_cases::check_overlap(dist_cases::run_overlap(dist_test::world()));
}

TEST_CASE("mpi: broadcast_parameters, then ranks with parts of the batch give the whole batch's gradient",
          "[dist][mpi][data_parallel]") {
  dist::communicator const& comm = dist_test::world();
  std::vector<double> weight_grad;
  std::vector<double> bias_grad;
  std::vector<double> const start = dist_cases::reference_gradients(weight_grad, bias_grad);
  dist_cases::check_gradients(dist_cases::run_gradients(comm, start), start, weight_grad, bias_grad, comm.size());
}

}  // namespace mpi_test
