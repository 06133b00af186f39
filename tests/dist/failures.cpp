// The failure cases of data-parallel training under mpirun, one per mode;
// each must end every rank with a non-zero exit and the message, within
// CTest's timeout (cmake/RunMpiFailure.cmake checks both):
//   throw      rank 1 throws in the middle of training while rank 0 waits in
//              all_reduce_gradients: the exception leaves main, the world
//              aborts every rank.
//   mismatch   rank 1 builds another model: broadcast_parameters throws on
//              every rank before the first step, naming the parameter.
//   bad_split  a batch of 5 rows over 2 ranks: shard<Batch> throws naming
//              Batch and both numbers.
//   unwind     an exception leaves the world's scope and is caught in main:
//              the world's destructor aborts every rank rather than
//              finalizing while rank 0 waits.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
#include <dimtensor/dist/mpi.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/optim.hpp>

namespace dt = dimtensor;
namespace dist = dimtensor::dist;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);

namespace {

void train(dist::communicator const& comm, std::string_view mode) {
  dt::nn::linear<In, Out> layer(In(3), Out(mode == "mismatch" && comm.rank() == 1 ? 4 : 2));
  dist::broadcast_parameters(layer, comm);
  dt::optim::sgd optimizer(layer, 0.1);
  dt::index_t const rows = mode == "bad_split" ? 5 : 4;
  auto const batch = dt::ones<float>(Batch(rows), In(3));
  for (int step = 0; step < 3; ++step) {
    if (mode == "throw" && comm.rank() == 1 && step == 2) {
      throw std::runtime_error("rank 1 ran out of data at step 2");
    }
    optimizer.zero_grad();
    auto const y = layer(dist::shard<Batch>(batch, comm));
    dt::sum(y * y).backward();
    dist::all_reduce_gradients(layer, comm);
    optimizer.step();
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view const mode = argc > 1 ? argv[1] : "";
  if (mode == "unwind") {
    try {
      dist::mpi_world mpi(argc, argv);
      dist::communicator const comm = mpi.world();
      if (comm.rank() == 1) throw std::runtime_error("rank 1 gave up");
      comm.barrier();
    } catch (std::exception const& e) {
      std::fprintf(stderr, "caught: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  dist::mpi_world mpi(argc, argv);
  train(mpi.world(), mode);
  return 0;
}
