// dist::mpi_world and the MPI transport (dist/mpi.hpp): the only file that
// includes <mpi.h>.

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/dist/mpi.hpp>

namespace dimtensor::dist {

namespace {

// The largest count one MPI call takes; longer buffers go in pieces.
constexpr std::size_t max_count = std::size_t{1} << 30;

[[noreturn]] void abort_world(int code, std::string_view why) noexcept {
  int rank = -1;
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized != 0 && finalized == 0) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "dimtensor::dist: rank %d: %.*s; aborting every rank\n", rank, static_cast<int>(why.size()),
               why.data());
  std::fflush(stderr);
  if (initialized != 0 && finalized == 0) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void check(int rc, char const* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw error(std::string("dist (mpi): ") + call + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

MPI_Datatype datatype_of(scalar_type t) {
  switch (t) {
    case scalar_type::f32: return MPI_FLOAT;
    case scalar_type::f64: return MPI_DOUBLE;
    case scalar_type::i32: return MPI_INT32_T;
    case scalar_type::i64: return MPI_INT64_T;
    case scalar_type::u8: return MPI_UINT8_T;
  }
  return MPI_BYTE;
}

MPI_Op op_of(reduce_op op) {
  switch (op) {
    case reduce_op::sum:
    case reduce_op::mean: return MPI_SUM;
    case reduce_op::max: return MPI_MAX;
    case reduce_op::min: return MPI_MIN;
  }
  return MPI_SUM;
}

int as_int(std::size_t n, char const* what) {
  if (n > static_cast<std::size_t>(INT_MAX)) {
    throw value_error(std::string("dist (mpi): ") + what + " of " + std::to_string(n) +
                      " exceeds what one MPI call takes (" + std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(n);
}

class mpi_transport final : public transport {
 public:
  mpi_transport(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  ~mpi_transport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned_ && finalized == 0) MPI_Comm_free(&comm_);
  }

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string_view name() const noexcept override { return "mpi"; }

  void all_reduce(void* data, std::size_t count, scalar_type type, reduce_op op) override {
    std::lock_guard<std::mutex> const lock(mutex_);
    auto* bytes = static_cast<unsigned char*>(data);
    for (std::size_t done = 0; done < count;) {
      std::size_t const n = count - done < max_count ? count - done : max_count;
      check(MPI_Allreduce(MPI_IN_PLACE, bytes + done * size_of(type), static_cast<int>(n), datatype_of(type),
                          op_of(op), comm_),
            "MPI_Allreduce");
      done += n;
    }
  }

  void broadcast(void* data, std::size_t bytes, int root) override {
    std::lock_guard<std::mutex> const lock(mutex_);
    auto* p = static_cast<unsigned char*>(data);
    for (std::size_t done = 0; done < bytes;) {
      std::size_t const n = bytes - done < max_count ? bytes - done : max_count;
      check(MPI_Bcast(p + done, static_cast<int>(n), MPI_BYTE, root, comm_), "MPI_Bcast");
      done += n;
    }
  }

  void all_gather(void const* in, void* out, std::vector<std::size_t> const& bytes_per_rank) override {
    std::vector<int> counts(bytes_per_rank.size());
    std::vector<int> offsets(bytes_per_rank.size());
    std::size_t at = 0;
    for (std::size_t r = 0; r < bytes_per_rank.size(); ++r) {
      counts[r] = as_int(bytes_per_rank[r], "a rank's bytes in all_gather");
      offsets[r] = as_int(at, "the bytes gathered");
      at += bytes_per_rank[r];
    }
    (void)as_int(at, "the bytes gathered");
    std::lock_guard<std::mutex> const lock(mutex_);
    check(MPI_Allgatherv(in, counts[static_cast<std::size_t>(rank_)], MPI_BYTE, out, counts.data(), offsets.data(),
                         MPI_BYTE, comm_),
          "MPI_Allgatherv");
  }

  void reduce_scatter(void const* in, void* out, std::vector<std::size_t> const& counts, scalar_type type,
                      reduce_op op) override {
    std::vector<int> n(counts.size());
    std::size_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      n[r] = as_int(counts[r], "a rank's part in reduce_scatter");
      total += counts[r];
    }
    (void)as_int(total, "the elements of reduce_scatter");
    std::lock_guard<std::mutex> const lock(mutex_);
    check(MPI_Reduce_scatter(in, out, n.data(), datatype_of(type), op_of(op), comm_), "MPI_Reduce_scatter");
  }

  void barrier() override {
    std::lock_guard<std::mutex> const lock(mutex_);
    check(MPI_Barrier(comm_), "MPI_Barrier");
  }

  std::shared_ptr<transport> split(int color, int key) override {
    MPI_Comm out = MPI_COMM_NULL;
    {
      std::lock_guard<std::mutex> const lock(mutex_);
      check(MPI_Comm_split(comm_, color, key, &out), "MPI_Comm_split");
    }
    return std::make_shared<mpi_transport>(out, true);
  }

  void abort(int code, std::string_view why) noexcept override { abort_world(code, why); }

 private:
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
  std::mutex mutex_;
};

// The message of the exception being handled, if any.
std::string current_message() {
  std::exception_ptr const e = std::current_exception();
  if (!e) return "std::terminate without an exception";
  try {
    std::rethrow_exception(e);
  } catch (std::exception const& x) {
    return std::string("uncaught exception: ") + x.what();
  } catch (...) {
    return "uncaught exception that is not a std::exception";
  }
}

void init(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) throw error("dist::mpi_world: MPI is already initialized (one mpi_world per process)");
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw error("dist::mpi_world: this MPI does not give MPI_THREAD_SERIALIZED");
  }
  // A process that ends through std::terminate (an exception out of main)
  // takes the others with it instead of leaving them in a collective.
  std::set_terminate([] { abort_world(1, current_message()); });
}

}  // namespace

mpi_world::mpi_world(int& argc, char**& argv) {
  init(&argc, &argv);
  world_ = std::make_shared<mpi_transport>(MPI_COMM_WORLD, false);
}

mpi_world::mpi_world() {
  init(nullptr, nullptr);
  world_ = std::make_shared<mpi_transport>(MPI_COMM_WORLD, false);
}

mpi_world::~mpi_world() {
  if (std::uncaught_exceptions() > 0) abort_world(1, "an exception left the scope of dist::mpi_world");
  world_.reset();
  MPI_Finalize();
}

}  // namespace dimtensor::dist
