# Sourced by the other scripts: common settings for configuring and building.
#   DIMTENSOR_JOBS   parallel compile and test jobs (default: number of cores)
# shellcheck shell=bash

jobs="${DIMTENSOR_JOBS:-$(nproc)}"

# ccache, when installed. The base directory makes hits survive a move of the
# source tree (CI builds in a fresh clone elsewhere).
cmake_launcher=()
if command -v ccache >/dev/null 2>&1; then
  cmake_launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
fi

# OpenBLAS picks its kernels from the CPU's model number, and on a virtual
# CPU that hides it ("Intel(R) Xeon(R) Processor") OpenBLAS 0.3.21 falls back
# to its oldest x86-64 kernels (Prescott, SSE3): SGEMM 4-5x slower than the
# AVX-512 kernels the CPU supports. Choose by the instruction sets instead,
# unless the user chose already. libtorch, when it runs beside dimtensor in
# the benchmarks, uses the same OpenBLAS and gets the same kernels.
if [[ -z "${OPENBLAS_CORETYPE:-}" && -r /proc/cpuinfo ]]; then
  cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
  if [[ " $cpu_flags " == *" avx512f "* && " $cpu_flags " == *" avx512vl "* ]]; then
    export OPENBLAS_CORETYPE=SkylakeX
  elif [[ " $cpu_flags " == *" avx2 "* && " $cpu_flags " == *" fma "* ]]; then
    export OPENBLAS_CORETYPE=Haswell
  fi
  unset cpu_flags
fi
