# CUDA builds of dimtensor's own tests, examples and benchmarks: the Thrust
# backend on CUDA (`dimtensor::cuda`, include/dimtensor/backends/thrust/),
# compiled by nvcc, contractions through cuBLAS.
#
#   DIMTENSOR_USE_CUDA            ON (default): use CUDA when nvcc is found and works
#   DIMTENSOR_WITH_CUDA           the outcome: ON when the CUDA targets are built
#   CMAKE_CUDA_ARCHITECTURES      default "90-real;90-virtual": sm_90 machine code
#                                 (H100/H200) plus compute_90 PTX, which the driver
#                                 compiles for newer GPUs; set it to build for others
#   CMAKE_CUDA_COMPILER_LAUNCHER  default: CMAKE_CXX_COMPILER_LAUNCHER (ccache)
#
# nvcc is looked for as CMake does (CMAKE_CUDA_COMPILER, $CUDACXX, PATH) and
# in the toolkit's standard place, /usr/local/cuda/bin/nvcc. Whatever goes
# wrong (no nvcc, a toolkit older than 12.0, which lacks C++20, a host
# compiler nvcc rejects, no cuBLAS) leaves DIMTENSOR_WITH_CUDA OFF with a
# STATUS line saying why; nothing else depends on CUDA.
#
# CUDA programs need no GPU to build: CI compiles them wherever nvcc is. They
# check for a device when they start and exit with 77 (CTest: Skipped)
# without one. An nvcc translation unit that instantiates much of dimtensor
# (a test file, an example) takes minutes of CPU, so the CUDA targets are
# kept to few of them.
#
# Defines, when DIMTENSOR_WITH_CUDA:
#   dimtensor_cuda_base   INTERFACE target for CUDA programs of this project:
#                         dimtensor, CUDA::cudart, CUDA::cublas, nvcc's flags
#                         and host warnings (without -Werror: nvcc's generated
#                         host code is not ours)
#   dimtensor_add_cuda_skip_tests(<target> PREFIX <p> LABELS <l>...)
#                         one CTest test per Catch2 test case of <target>, as
#                         dimtensor_catch_discover_tests, each with
#                         SKIP_RETURN_CODE 77
# The tests (tests/cuda), the examples (example_<name>_cuda) and the
# benchmark (bench_attention_bench_cuda) use them.

option(DIMTENSOR_USE_CUDA "Build the CUDA tests, examples and benchmark when nvcc is found" ON)
set(DIMTENSOR_WITH_CUDA OFF)
set(DIMTENSOR_CUDA_MIN_VERSION 12.0)

# function: the reason, as a STATUS line, for building without CUDA.
function(dimtensor_cuda_off why)
  message(STATUS "dimtensor: CUDA OFF: ${why}")
endfunction()

# Detection, at file scope (enable_language() may not run in a function);
# each return() leaves this file with DIMTENSOR_WITH_CUDA OFF.
if(NOT DIMTENSOR_USE_CUDA)
  dimtensor_cuda_off("DIMTENSOR_USE_CUDA is OFF")
  return()
endif()
if(NOT DIMTENSOR_WITH_THRUST)
  dimtensor_cuda_off("the Thrust backend is off (DIMTENSOR_WITH_THRUST OFF)")
  return()
endif()
if(NOT DIMTENSOR_BUILD_TESTS AND NOT DIMTENSOR_BUILD_EXAMPLES AND NOT DIMTENSOR_BUILD_BENCHMARKS)
  dimtensor_cuda_off("no tests, examples or benchmarks are built")
  return()
endif()

# check_language(CUDA) tries the compiler in a separate CMake project, so a
# compiler that does not work turns CUDA off instead of failing this
# configure; it does nothing when CMAKE_CUDA_COMPILER is set. A compiler the
# user named (-DCMAKE_CUDA_COMPILER=...) is handed to it as $CUDACXX, once;
# otherwise the toolkit's standard place is offered the same way when nvcc
# is not on the PATH.
if(DEFINED CMAKE_CUDA_COMPILER AND CMAKE_CUDA_COMPILER
   AND NOT "${CMAKE_CUDA_COMPILER}" STREQUAL "${DIMTENSOR_CUDA_COMPILER_CHECKED}")
  set(ENV{CUDACXX} "${CMAKE_CUDA_COMPILER}")
  unset(CMAKE_CUDA_COMPILER CACHE)
  unset(CMAKE_CUDA_COMPILER)
elseif(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(_dimtensor_nvcc_on_path nvcc NO_CACHE)
  if(NOT _dimtensor_nvcc_on_path AND EXISTS "/usr/local/cuda/bin/nvcc")
    set(ENV{CUDACXX} "/usr/local/cuda/bin/nvcc")
  endif()
endif()

include(CheckLanguage)
check_language(CUDA)
set(DIMTENSOR_CUDA_COMPILER_CHECKED "${CMAKE_CUDA_COMPILER}" CACHE INTERNAL "The CUDA compiler check_language accepted")
if(NOT CMAKE_CUDA_COMPILER)
  dimtensor_cuda_off("no working CUDA compiler (nvcc) found; set CMAKE_CUDA_COMPILER or CUDACXX to use one")
  return()
endif()

# The version before enable_language(CUDA), which fails hard: C++20 and the
# default architectures need CUDA 12.
execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --version
  OUTPUT_VARIABLE _dimtensor_nvcc_version_text ERROR_QUIET RESULT_VARIABLE _dimtensor_nvcc_rc)
if(NOT _dimtensor_nvcc_rc EQUAL 0 OR NOT _dimtensor_nvcc_version_text MATCHES "release ([0-9]+\\.[0-9]+)")
  dimtensor_cuda_off("${CMAKE_CUDA_COMPILER} --version failed")
  return()
endif()
set(_dimtensor_nvcc_version "${CMAKE_MATCH_1}")
if(_dimtensor_nvcc_version VERSION_LESS DIMTENSOR_CUDA_MIN_VERSION)
  dimtensor_cuda_off("nvcc ${_dimtensor_nvcc_version} (${CMAKE_CUDA_COMPILER}) is older than "
    "${DIMTENSOR_CUDA_MIN_VERSION}, which C++20 needs")
  return()
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual" CACHE STRING
    "CUDA architectures of dimtensor's CUDA programs (sm_90 code plus compute_90 PTX for newer GPUs)")
endif()
if(NOT DEFINED CMAKE_CUDA_COMPILER_LAUNCHER AND DEFINED CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${CMAKE_CXX_COMPILER_LAUNCHER}" CACHE STRING
    "Launcher of nvcc (ccache), by default that of the C++ compiler")
endif()
enable_language(CUDA)
# C++20: through CMAKE_CUDA_STANDARD where CMake knows nvcc's flag for it;
# CMake 3.25 does not (CMAKE_CUDA20_STANDARD_COMPILE_OPTION unset), so there
# the flag is given directly (dimtensor_cuda_base below).
if(DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  set(_dimtensor_cuda_std_flag "")
  set(_dimtensor_cuda_std_args CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON)
else()
  set(_dimtensor_cuda_std_flag "-std=c++20")
  set(_dimtensor_cuda_std_args COMPILE_DEFINITIONS "-std=c++20")
endif()

find_package(CUDAToolkit)
if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cudart OR NOT TARGET CUDA::cublas)
  dimtensor_cuda_off("the CUDA toolkit's runtime or cuBLAS (CUDA::cudart, CUDA::cublas) was not found")
  return()
endif()

# C++20, the toolkit's Thrust (CCCL) and cuBLAS under this nvcc and host
# compiler, for these architectures: checked once per build tree (cached).
if(NOT DEFINED DIMTENSOR_CUDA_WORKS)
  set(_dimtensor_probe "${CMAKE_BINARY_DIR}/CMakeFiles/dimtensor_cuda_probe.cu")
  file(WRITE "${_dimtensor_probe}" [=[
#include <concepts>
#include <cublas_v2.h>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
template <class T> concept number = std::floating_point<T>;
template <number T> T twice(T v) { return v + v; }
int main() {
  thrust::device_vector<float> v(4, 1.0f);
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS) cublasDestroy(handle);
  return thrust::reduce(v.begin(), v.end()) == twice(2.0f) ? 0 : 1;
}
]=])
  message(CHECK_START "dimtensor: checking that nvcc compiles C++20 with Thrust and cuBLAS")
  try_compile(_dimtensor_cuda_works "${CMAKE_BINARY_DIR}/CMakeFiles/dimtensor_cuda_probe"
    SOURCES "${_dimtensor_probe}"
    CMAKE_FLAGS "-DCMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}"
    LINK_LIBRARIES CUDA::cudart CUDA::cublas
    ${_dimtensor_cuda_std_args}
    OUTPUT_VARIABLE _dimtensor_probe_output)
  set(DIMTENSOR_CUDA_WORKS "${_dimtensor_cuda_works}" CACHE INTERNAL
    "Whether nvcc compiles and links C++20 with Thrust and cuBLAS")
  if(_dimtensor_cuda_works)
    message(CHECK_PASS "yes")
  else()
    message(CHECK_FAIL "no")
    file(APPEND "${CMAKE_BINARY_DIR}${CMAKE_FILES_DIRECTORY}/CMakeError.log"
      "dimtensor: the CUDA probe (C++20, Thrust, cuBLAS) failed:\n${_dimtensor_probe_output}\n")
  endif()
endif()
if(NOT DIMTENSOR_CUDA_WORKS)
  dimtensor_cuda_off("nvcc ${_dimtensor_nvcc_version} cannot compile and link C++20 with Thrust and cuBLAS "
    "for architectures ${CMAKE_CUDA_ARCHITECTURES} (CMakeFiles/CMakeError.log says why)")
  return()
endif()

set(DIMTENSOR_WITH_CUDA ON)
if(CMAKE_CUDA_HOST_COMPILER)
  set(_dimtensor_cuda_host "${CMAKE_CUDA_HOST_COMPILER}")
else()
  set(_dimtensor_cuda_host "nvcc's default")
endif()
message(STATUS "dimtensor: CUDA ${DIMTENSOR_WITH_CUDA} (nvcc ${CMAKE_CUDA_COMPILER_VERSION} at ${CMAKE_CUDA_COMPILER}, "
  "architectures ${CMAKE_CUDA_ARCHITECTURES}, host compiler ${_dimtensor_cuda_host})")

# ---------------------------------------------------------------------------
# What the CUDA programs of this project build with.
# ---------------------------------------------------------------------------
add_library(dimtensor_cuda_base INTERFACE)
target_link_libraries(dimtensor_cuda_base INTERFACE dimtensor::thrust CUDA::cudart CUDA::cublas)
target_compile_options(dimtensor_cuda_base INTERFACE
  "$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${_dimtensor_cuda_std_flag}>>:${_dimtensor_cuda_std_flag}>"
  # constexpr functions of the standard library and Boost.Mp11 called from
  # device code (std::array's operator[] and friends in the evaluators).
  "$<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>"
  # __device__ lambdas in Thrust calls.
  "$<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>"
  # nvcc's front end warns (#186) about `i < R` in loops of templates
  # instantiated with R = 0 (rank-0 tensors), which g++ and clang accept quietly.
  "$<$<COMPILE_LANGUAGE:CUDA>:--diag-suppress=186>"
  # Host warnings of our code; no -Werror, since nvcc's generated host code
  # and CCCL trip warnings that are not ours to fix.
  "$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CUDA_COMPILER_ID:NVIDIA>>:-Xcompiler=-Wall,-Wextra>")

# function: dimtensor_add_cuda_skip_tests(<target> PREFIX <prefix> LABELS <label>...)
# One CTest test per Catch2 test case of <target>, listed after each link
# (cmake/CatchAddTests.cmake), each Skipped when the program exits with 77
# (no CUDA device).
set(DIMTENSOR_CUDA_ADD_TESTS_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/../tests/cuda/CudaAddTests.cmake")
function(dimtensor_add_cuda_skip_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "PREFIX" "LABELS")
  set(tests_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    BYPRODUCTS "${tests_file}"
    COMMAND "${CMAKE_COMMAND}"
      "-DEXECUTABLE=$<TARGET_FILE:${target}>"
      "-DOUTPUT=${tests_file}"
      "-DPREFIX=${arg_PREFIX}"
      "-DLABELS=${arg_LABELS}"
      "-DWORKING_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}"
      "-DCATCH_ADD_TESTS=${PROJECT_SOURCE_DIR}/cmake/CatchAddTests.cmake"
      -P "${DIMTENSOR_CUDA_ADD_TESTS_SCRIPT}"
    COMMENT "Listing the Catch2 test cases of ${target}"
    VERBATIM)
  file(WRITE "${include_file}"
    "if(EXISTS \"${tests_file}\")\n"
    "  include(\"${tests_file}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()

# ---------------------------------------------------------------------------
# dimtensor_dist_nccl: dist::nccl_communicator (include/dimtensor/dist/nccl.hpp,
# src/dist/nccl/nccl.cu), NCCL's collectives on dimtensor::cuda's tensors,
# where the toolkit has NCCL.  Compiled by nvcc in every CUDA build (CI
# too); its test (tests/cuda, one rank) runs where a GPU is.
# ---------------------------------------------------------------------------
set(DIMTENSOR_WITH_NCCL OFF)
find_path(DIMTENSOR_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS}
  DOC "The folder holding NCCL's nccl.h")
find_library(DIMTENSOR_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} "${CUDAToolkit_LIBRARY_ROOT}/lib"
  "${CUDAToolkit_TARGET_DIR}/lib" DOC "NCCL's library")
if(DIMTENSOR_NCCL_INCLUDE_DIR AND DIMTENSOR_NCCL_LIBRARY)
  set(DIMTENSOR_WITH_NCCL ON)
  add_library(dimtensor_dist_nccl STATIC "${PROJECT_SOURCE_DIR}/src/dist/nccl/nccl.cu")
  target_include_directories(dimtensor_dist_nccl SYSTEM PRIVATE "${DIMTENSOR_NCCL_INCLUDE_DIR}")
  target_link_libraries(dimtensor_dist_nccl PUBLIC dimtensor::dimtensor CUDA::cudart "${DIMTENSOR_NCCL_LIBRARY}")
  target_compile_options(dimtensor_dist_nccl PRIVATE
    "$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${_dimtensor_cuda_std_flag}>>:${_dimtensor_cuda_std_flag}>"
    "$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CUDA_COMPILER_ID:NVIDIA>>:-Xcompiler=-Wall,-Wextra>")
  target_compile_definitions(dimtensor_dist_nccl PUBLIC DIMTENSOR_HAS_NCCL=1)
  message(STATUS "dimtensor: NCCL ON (${DIMTENSOR_NCCL_LIBRARY})")
else()
  message(STATUS "dimtensor: NCCL OFF: the CUDA toolkit has no nccl.h and libnccl")
endif()
