#!/usr/bin/env bash
# Installs the Debian packages dimtensor's build, tests, examples, benchmarks
# and docs need, when any is missing. Nothing else downloads anything: the
# build itself never fetches. libtorch (libtorch-dev, python3-torch) is
# optional and left to the user: benchmarks and parity regeneration use it
# when present.
set -euo pipefail

packages=(
  cmake ninja-build g++
  libboost-dev librange-v3-dev catch2
  libopenblas-dev libblis-dev libthrust-dev nlohmann-json3-dev
  libbenchmark-dev doxygen graphviz libpng-dev
  libcairo2-dev pkg-config fonts-dejavu-core
  clang libclang-rt-14-dev
  libsentencepiece-dev
  libopenmpi-dev openmpi-bin
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  if [[ "$status" != *"ok installed"* ]]; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "deps: all ${#packages[@]} Debian packages present"
  exit 0
fi

echo "deps: installing ${missing[*]}"
sudo=()
if ((EUID != 0)); then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "deps: not root and no sudo; install these yourself: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
