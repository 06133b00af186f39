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
