// Linked into the CUDA builds of the examples (examples/CMakeLists.txt,
// example_<name>_cuda): before main() runs, checks that a CUDA device is
// there; without one, prints why and exits with 77, which CTest reports as
// Skipped (SKIP_RETURN_CODE 77). The examples themselves stay as they are.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace {

bool require_cuda_device() {
  int count = 0;
  cudaError_t const status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n",
                cudaGetErrorString(status != cudaSuccess ? status : cudaErrorNoDevice));
    std::fflush(stdout);
    std::exit(77);
  }
  return true;
}

[[maybe_unused]] bool const device_present = require_cuda_device();

}  // namespace
