// Catch2's main() for dimtensor_dist_tests, run under mpirun (tests/dist/
// CMakeLists.txt): MPI's world for the life of the run, the tests, then
// every rank's verdict combined, so that a test that fails on one rank
// fails the run on all.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>

#include <dimtensor/dist.hpp>
#include <dimtensor/dist/mpi.hpp>

#include "world.hpp"

namespace {
std::optional<dimtensor::dist::communicator> the_world;
DIMTENSOR_DIM(Rank);
}  // namespace

dimtensor::dist::communicator const& dist_test::world() { return *the_world; }

int main(int argc, char* argv[]) {
  dimtensor::dist::mpi_world mpi(argc, argv);
  the_world.emplace(mpi.world());
  int const failed = Catch::Session().run(argc, argv);
  dimtensor::tensor<std::int32_t, Rank> verdict{failed != 0 ? 1 : 0};
  dimtensor::dist::all_reduce(verdict, *the_world, dimtensor::dist::reduce_op::max);
  the_world.reset();
  return verdict.item() != 0 ? 1 : 0;
}
