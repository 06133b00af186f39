// dist::nccl_communicator (dist/nccl.hpp): NCCL for buffers in device
// memory, the control communicator for host memory.  Compiled by nvcc.

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/dist/nccl.hpp>

namespace dimtensor::dist {

namespace {

void check_cuda(cudaError_t rc, char const* call) {
  if (rc != cudaSuccess) {
    throw device_error(std::string("dist (nccl): ") + call + " failed: " + cudaGetErrorString(rc));
  }
}

void check_nccl(ncclResult_t rc, char const* call) {
  if (rc != ncclSuccess) {
    throw device_error(std::string("dist (nccl): ") + call + " failed: " + ncclGetErrorString(rc));
  }
}

ncclDataType_t nccl_type(scalar_type t) {
  switch (t) {
    case scalar_type::f32: return ncclFloat32;
    case scalar_type::f64: return ncclFloat64;
    case scalar_type::i32: return ncclInt32;
    case scalar_type::i64: return ncclInt64;
    case scalar_type::u8: return ncclUint8;
  }
  return ncclUint8;
}

ncclRedOp_t nccl_op(reduce_op op) {
  switch (op) {
    case reduce_op::sum:
    case reduce_op::mean: return ncclSum;
    case reduce_op::max: return ncclMax;
    case reduce_op::min: return ncclMin;
  }
  return ncclSum;
}

class nccl_transport final : public transport {
 public:
  nccl_transport(communicator control, int device) : control_(std::move(control)) {
    if (device < 0) check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    device_ = device;
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    ncclUniqueId id;
    std::memset(&id, 0, sizeof(id));
    if (control_.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    control_.raw().broadcast(&id, sizeof(id), 0);
    check_nccl(ncclCommInitRank(&comm_, control_.size(), id, control_.rank()), "ncclCommInitRank");
    cudaError_t const rc = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    if (rc != cudaSuccess) {
      ncclCommDestroy(comm_);
      check_cuda(rc, "cudaStreamCreateWithFlags");
    }
  }
  ~nccl_transport() override {
    cudaStreamDestroy(stream_);
    ncclCommDestroy(comm_);
  }

  int rank() const noexcept override { return control_.rank(); }
  int size() const noexcept override { return control_.size(); }
  std::string_view name() const noexcept override { return "nccl"; }

  // Host memory: the control communicator's.
  void all_reduce(void* data, std::size_t count, scalar_type type, reduce_op op) override {
    control_.raw().all_reduce(data, count, type, op);
  }
  void broadcast(void* data, std::size_t bytes, int root) override { control_.raw().broadcast(data, bytes, root); }
  void all_gather(void const* in, void* out, std::vector<std::size_t> const& bytes_per_rank) override {
    control_.raw().all_gather(in, out, bytes_per_rank);
  }
  void reduce_scatter(void const* in, void* out, std::vector<std::size_t> const& counts, scalar_type type,
                      reduce_op op) override {
    control_.raw().reduce_scatter(in, out, counts, type, op);
  }
  void barrier() override { control_.raw().barrier(); }
  std::shared_ptr<transport> split(int color, int key) override {
    communicator const part = control_.split(color, key);
    return std::make_shared<nccl_transport>(part, device_);
  }
  void abort(int code, std::string_view why) noexcept override {
    ncclCommAbort(comm_);
    comm_ = nullptr;
    control_.abort(code, why);
  }

  // Device memory: NCCL, on this transport's stream, waited for (the
  // tensors' kernels run on the default stream, which is synchronized first).
  bool takes_device_memory() const noexcept override { return true; }
  void all_reduce_device(void* data, std::size_t count, scalar_type type, reduce_op op) override {
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check_nccl(ncclAllReduce(data, data, count, nccl_type(type), nccl_op(op), comm_, stream_), "ncclAllReduce");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void broadcast_device(void* data, std::size_t bytes, int root) override {
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check_nccl(ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, stream_), "ncclBroadcast");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  communicator control_;
  int device_ = 0;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

communicator nccl_communicator(communicator const& control, int device) {
  return communicator(std::make_shared<nccl_transport>(control, device));
}

}  // namespace dimtensor::dist
