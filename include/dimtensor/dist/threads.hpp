#pragma once
/// @file
/// @brief `dist::run_threads(n, f)`: a world of @p n ranks that are threads
/// of this process, with the same collectives as MPI's: for tests, and for
/// trying data-parallel code without MPI.

#include <functional>

#include <dimtensor/dist/communicator.hpp>

namespace dimtensor::dist {

/// @brief Runs `f(comm)` on @p ranks threads, rank r's communicator on the
/// r-th, and returns when every one has returned.
///
/// The collectives meet in shared memory; reductions add in rank order, so
/// every rank gets the same bits.  When a rank throws, the group is
/// aborted: the other ranks' collectives (and those of communicators split
/// from it) throw `aborted_error` naming the failed rank and its message,
/// and once every thread has ended run_threads rethrows the failed rank's
/// own exception.  `value_error` for fewer than 1 rank.
void run_threads(int ranks, std::function<void(communicator)> const& f);

}  // namespace dimtensor::dist
