#!/usr/bin/env bash
# Compile time as a benchmark: a fixed set of translation units compiled
# against two trees in the same run, old and new side by side, and a table of
# CPU seconds (user) and peak memory (max RSS).
#
#   scripts/compile_time.sh [OLD_REV [NEW_REV]]
#
#   OLD_REV   the tree to compare against (default: 48d4ed1, the last commit
#             before the layering work of issue 12)
#   NEW_REV   default: the working tree as it is (uncommitted edits included)
#   DIMTENSOR_COMPILE_TIME_QUICK=1  leaves out the sanitizer build of the
#             heaviest test file (the longest row: minutes of CPU per tree)
#   CXX       the compiler (default g++)
#
# The translation units (each tree compiles its own copy of the file):
#   umbrella             `#include <dimtensor/dimtensor.hpp>`, -fsyntax-only
#   example <name>       every examples/<name>/*.cpp, -O3 -DNDEBUG, summed
#   additive_attention   tests/unit/nn/attention/additive_attention_test.cpp, -O3
#   backend_generic_asan tests/unit/nn/backend_generic_test.cpp as CI's
#                        sanitizer stage builds it (-O0 -g1, ASan + UBSan)
# and, apart, the library's own sources (src/, compiled once per build).
# Flags are those of the project's targets (OpenMP, CBLAS, cairo, Thrust, the
# tests' warnings), written out here so that no build tree is needed. The old
# and the new compile of a row run at the same time, one per core, so both
# see the same machine load; run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

old_rev=${1:-48d4ed1}
new_rev=${2:-}
cxx=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# archive <rev> <dir>: the tree's include, tests, examples and (where it has
# one) src folder.
archive() {
  local paths=(include tests examples)
  git cat-file -e "$1:src" 2>/dev/null && paths+=(src)
  git archive "$1" "${paths[@]}" | tar -x -C "$work" --one-top-level="$2"
}
archive "$old_rev" old
if [[ -n "$new_rev" ]]; then
  archive "$new_rev" new
  new_label=$new_rev
else
  mkdir -p "$work/new"
  cp -r include tests examples "$work/new/"
  [[ -d src ]] && cp -r src "$work/new/"
  new_label="working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- include tests examples src || echo '+edits'))"
fi

# The flags of the project's targets (CMakeLists.txt, tests/CMakeLists.txt).
# Thrust: Debian's libthrust-dev (/usr/include) as CMake finds it first, else CCCL.
thrust_include=()
if [[ ! -f /usr/include/thrust/version.h ]]; then
  for dir in /usr/local/cuda/include/cccl /usr/local/cuda/targets/x86_64-linux/include/cccl; do
    [[ -f "$dir/thrust/version.h" ]] && thrust_include=(-isystem "$dir") && break
  done
fi
common=(-std=c++20 -fopenmp -DDIMTENSOR_HAS_CBLAS=1 -DDIMTENSOR_HAS_THRUST=1
  -isystem /usr/include/x86_64-linux-gnu/openblas-pthread "${thrust_include[@]}")
viz=()
if pkg-config --exists cairo 2>/dev/null; then
  read -r -a viz <<<"-DDIMTENSOR_HAS_VIZ=1 $(pkg-config --cflags cairo)"
fi
warnings=(-Wall -Wextra -Wpedantic -Wno-restrict)
asan=(-O0 -g1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  -Wno-maybe-uninitialized -DDIMTENSOR_NO_CACHING_ALLOCATOR)

# measure <tree> <out> <args...>: compiles, writes "user_seconds max_rss_kb" to <out>.
measure() {
  local tree=$1 out=$2
  shift 2
  (cd "$work/$tree" && /usr/bin/time -f '%U %M' -o "$out" "$cxx" "${common[@]}" -I include -I tests "$@" \
    >"$out.log" 2>&1) || {
    echo "compile failed in the $tree tree: $*" >&2
    cat "$out.log" >&2
    exit 1
  }
}

rows=()
# row <label> <args...>: one TU, old and new at once. Sources are relative to
# the tree; several `-c` sources in one row are compiled one after another
# and summed.
row() {
  local label=$1
  shift
  local -a sources=() flags=()
  for arg in "$@"; do
    if [[ "$arg" == *.cpp ]]; then sources+=("$arg"); else flags+=("$arg"); fi
  done
  local tree
  for tree in old new; do
    (
      : >"$work/$tree.sum"
      for source in "${sources[@]}"; do
        measure "$tree" "$work/$tree.one" "${flags[@]}" "$source"
        cat "$work/$tree.one" >>"$work/$tree.sum"
      done
    ) &
  done
  wait
  local old_s old_m new_s new_m
  read -r old_s old_m < <(awk '{s += $1; if ($2 > m) m = $2} END {print s, m}' "$work/old.sum")
  read -r new_s new_m < <(awk '{s += $1; if ($2 > m) m = $2} END {print s, m}' "$work/new.sum")
  rows+=("$(awk -v l="$label" -v os="$old_s" -v ns="$new_s" -v om="$old_m" -v nm="$new_m" \
    'BEGIN {printf "| %-34s | %8.1f | %8.1f | %5.2fx | %7.0f | %7.0f |", l, os, ns, ns / os, om / 1024, nm / 1024}')")
  echo "${rows[-1]}"
}

printf '#include <dimtensor/dimtensor.hpp>\n' >"$work/old/umbrella.cpp"
cp "$work/old/umbrella.cpp" "$work/new/umbrella.cpp"

echo "compile_time: $cxx ($("$cxx" --version | head -n 1)), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "old: $old_rev ($(git rev-parse --short "$old_rev")), new: $new_label"
echo
echo "| translation unit                   |  old CPU s |  new CPU s | new/old | old MB | new MB |"
echo "|------------------------------------|-----------:|-----------:|--------:|-------:|-------:|"
row "umbrella (-fsyntax-only)" -fsyntax-only umbrella.cpp
for dir in examples/*/; do
  name=$(basename "$dir")
  [[ -f "$dir/main.cpp" ]] || continue  # examples/data: the corpora, no program
  mapfile -t sources < <(cd "$work/new" && ls "examples/$name"/*.cpp)
  # the examples that run the parity tests' tiny models find them through DIMTENSOR_TEST_MODELS_DIR
  row "example $name (-O3)" -O3 -DNDEBUG "${viz[@]}" "${warnings[@]}" \
    "-DDIMTENSOR_TEST_MODELS_DIR=\"$root/tests/parity/data/models\"" -o /dev/null -c "${sources[@]}"
done
row "additive_attention_test (-O3)" -O3 -DNDEBUG "${viz[@]}" "${warnings[@]}" \
  "-DDIMTENSOR_UNIT_DATA_DIR=\"$root/tests/unit\"" -o /dev/null -c tests/unit/nn/attention/additive_attention_test.cpp
if [[ "${DIMTENSOR_COMPILE_TIME_QUICK:-0}" != 1 ]]; then
  row "backend_generic_test (asan)" "${asan[@]}" "${viz[@]}" "${warnings[@]}" -fno-sanitize=null \
    "-DDIMTENSOR_UNIT_DATA_DIR=\"$root/tests/unit\"" -o /dev/null -c tests/unit/nn/backend_generic_test.cpp
fi

# The compiled library (src/, less the cairo drawing and the MPI and NCCL
# transports, which are targets of their own), which a build compiles
# once whatever its number of files: not part of any row above, shown so that
# what moved out of the headers is not lost from sight.
library_seconds() {
  local tree=$1 total=0 one source
  [[ -d "$work/$tree/src" ]] || { echo 0; return; }
  while IFS= read -r source; do
    measure "$tree" "$work/$tree.lib" -O3 -DNDEBUG "${warnings[@]}" -o /dev/null -c "$source"
    read -r one _ <"$work/$tree.lib"
    total=$(awk -v a="$total" -v b="$one" 'BEGIN {print a + b}')
  done < <(cd "$work/$tree" && find src -name '*.cpp' ! -path 'src/viz/*' ! -path 'src/dist/mpi/*' | sort)
  echo "$total"
}
echo
echo "compiled once per build (src/ without src/viz and src/dist/mpi, -O3, summed): old $(library_seconds old) s, new $(library_seconds new) s"

