#pragma once
/// @file
/// @brief `dist::mpi_world`: MPI's world (RAII init and finalize) and its
/// communicator, in the target dimtensor::dist (built where CMake finds
/// MPI).  This header does not include `<mpi.h>`: the MPI calls live in
/// the compiled target.

#include <memory>

#include <dimtensor/dist/communicator.hpp>

namespace dimtensor::dist {

/// @brief MPI for the life of the object: `MPI_Init_thread` in the
/// constructor, `MPI_Finalize` in the destructor, one per process.
///
/// A process that fails must not leave the others waiting in a collective,
/// so the world ends them all: an exception that leaves the world's scope
/// (the destructor runs during unwinding), an exception that reaches
/// `std::terminate` (one that leaves `main`), or an `aborted_error` of the
/// transport all end in `MPI_Abort(MPI_COMM_WORLD, 1)` after the message is
/// printed on stderr with the rank, and `mpirun` then stops every rank and
/// exits non-zero.  The collectives return errors (`MPI_ERRORS_RETURN`),
/// thrown as `dimtensor::error` with MPI's own words.
class mpi_world {
 public:
  /// Initializes MPI (with the program's arguments, which MPI may read)
  /// asking for MPI_THREAD_SERIALIZED; `error` when MPI is already
  /// initialized or fails.
  mpi_world(int& argc, char**& argv);
  /// Initializes MPI without the program's arguments.
  mpi_world();
  mpi_world(mpi_world const&) = delete;
  mpi_world& operator=(mpi_world const&) = delete;
  /// Finalizes MPI; aborts every rank instead while an exception unwinds.
  ~mpi_world();

  /// MPI_COMM_WORLD as a communicator.
  communicator world() const { return communicator(world_); }
  /// This process's rank in the world.
  int rank() const noexcept { return world_->rank(); }
  /// The number of processes.
  int size() const noexcept { return world_->size(); }

 private:
  std::shared_ptr<transport> world_;
};

}  // namespace dimtensor::dist
