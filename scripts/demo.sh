#!/usr/bin/env bash
# Builds and runs the quick-start example (examples/quickstart) in the
# release build tree, build/release. Files it writes land in
# build/release/example_output/quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
source scripts/env.sh

cmake --preset release "${cmake_launcher[@]}"
cmake --build --preset release --target example_quickstart --parallel "$jobs"

output_dir="$PWD/build/release/example_output/quickstart"
mkdir -p "$output_dir"
echo "--- build/release/examples/example_quickstart $output_dir"
build/release/examples/example_quickstart "$output_dir"
if [ -n "$(ls -A "$output_dir")" ]; then
  echo "--- files written to $output_dir:"
  ls -1 "$output_dir"
fi
