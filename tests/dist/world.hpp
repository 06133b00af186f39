// The MPI world of dimtensor_dist_tests (tests/dist/main.cpp).
#pragma once

#include <dimtensor/dist/communicator.hpp>

namespace dist_test {
/// MPI_COMM_WORLD, made by main() before the tests run.
dimtensor::dist::communicator const& world();
}  // namespace dist_test
