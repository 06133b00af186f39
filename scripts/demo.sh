#!/usr/bin/env bash
# Builds and runs the examples in the release build tree, build/release:
# the quick start (examples/quickstart) and d2l's attention chapter
# (examples/attention_scoring, examples/multihead_attention,
# examples/nadaraya_watson, examples/translation: Bahdanau seq2seq and the
# Transformer trained with the book's settings, about 95 s on 2 cores).
# Each writes its files (heatmaps, plots) into
# build/release/example_output/<name>, and the script lists them.
#
# The chapter's examples draw with cairo; where it is missing, CMake leaves
# them out and only the quick start runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
source scripts/env.sh

examples=(quickstart attention_scoring multihead_attention nadaraya_watson translation)

cmake --preset release "${cmake_launcher[@]}"

# Only the examples CMake configured (those that draw need cairo).
known_targets=$(cmake --build --preset release --target help)
targets=()
built=()
for name in "${examples[@]}"; do
  if grep -q "^example_$name:" <<<"$known_targets"; then
    targets+=("example_$name")
    built+=("$name")
  else
    echo "--- example_$name is not configured (see CMake's notes above); skipped"
  fi
done
cmake --build --preset release --target "${targets[@]}" --parallel "$jobs"

for name in "${built[@]}"; do
  output_dir="$PWD/build/release/example_output/$name"
  mkdir -p "$output_dir"
  echo
  echo "--- build/release/examples/example_$name $output_dir"
  "build/release/examples/example_$name" "$output_dir"
  if [ -n "$(ls -A "$output_dir")" ]; then
    echo "--- files written to $output_dir:"
    ls -1 "$output_dir"
  fi
done
