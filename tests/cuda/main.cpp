// main() of dimtensor_cuda_tests: Catch2's session, run only where a CUDA
// device is. Without one it prints why and exits with 77, which CTest
// reports as Skipped (SKIP_RETURN_CODE 77, tests/cuda/CMakeLists.txt).
// Listing the test cases needs no device: the build lists them on machines
// without a GPU to register one CTest test per case.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string_view>

namespace {

// Catch2 options that only list or describe, and run no test case.
bool only_lists(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view const arg = argv[i];
    if (arg.rfind("--list", 0) == 0 || arg == "-l" || arg == "-t" || arg == "-h" || arg == "-?" || arg == "--help") {
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (!only_lists(argc, argv)) {
    int count = 0;
    cudaError_t const status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      std::printf("SKIPPED: no CUDA device (%s)\n",
                  cudaGetErrorString(status != cudaSuccess ? status : cudaErrorNoDevice));
      return 77;
    }
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, 0) == cudaSuccess) {
      std::printf("CUDA device 0 of %d: %s (compute capability %d.%d)\n", count, properties.name, properties.major,
                  properties.minor);
    }
  }
  return Catch::Session().run(argc, argv);
}
