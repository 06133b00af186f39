#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU and the CUDA toolkit,
# configures a fresh Release build of only what runs on the GPU (the CUDA
# tests, the CUDA builds of the examples, the CUDA attention benchmark),
# builds it with all cores, runs the tests and examples under CTest (label
# `cuda`) and the benchmark briefly, and writes a short Markdown report.
#
#   tests/cuda/gpu_check.sh [REPORT]
#
#   REPORT                        where the report goes (default: BUILD/gpu_report.md);
#                                 it is also printed
#   DIMTENSOR_GPU_BUILD_DIR       the build folder (default: build/gpu-check), emptied first
#   DIMTENSOR_JOBS                parallel build jobs (default: all cores)
#   CMAKE_CUDA_ARCHITECTURES      default: the GPU's own (nvidia-smi compute_cap), else
#                                 the project's default (90-real;90-virtual)
#   DIMTENSOR_GPU_CHECK_FORCE=1   go on without a GPU (the tests then report Skipped):
#                                 checks the script and the build on a machine without one
#
# Exit status (the report says the same):
#   0  everything built, every test and example passed, the benchmark ran
#   1  the configure, the build, a test, an example or the benchmark failed
#   2  no GPU: nvidia-smi is missing or sees no device (nothing was built)
#   3  no CUDA build: no nvcc, or CMake turned CUDA off (its reason is in the report)
# Needs what the project's build needs (cmake >= 3.25, a C++20 compiler,
# Boost, Catch2 v2, Google Benchmark), the toolkit's nvcc and cuBLAS, and
# Ninja or Make. On a 16-core machine it takes about 3 minutes, mostly nvcc.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${DIMTENSOR_GPU_BUILD_DIR:-$root/build/gpu-check}
report=${1:-$build/gpu_report.md}
jobs=${DIMTENSOR_JOBS:-$(nproc 2>/dev/null || echo 4)}
started=$SECONDS

mkdir -p "$(dirname "$report")"
report=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
logs=$(mktemp -d "${TMPDIR:-/tmp}/dimtensor-gpu-check.XXXXXX")

# ---------------------------------------------------------------------------
# The report, written as the check goes.
# ---------------------------------------------------------------------------
: >"$report.tmp"
say() { printf '%s\n' "$*" >>"$report.tmp"; }
block() {  # block <file> [max lines]: the file's last lines as a code block
  local text
  text=$(tail -n "${2:-60}" "$1" 2>/dev/null)
  say '```'
  say "${text:-(nothing)}"
  say '```'
}
finish() {  # finish <exit status> <verdict>
  say ""
  say "**Result: $2** (exit status $1, $((SECONDS - started)) s in all)"
  mv "$report.tmp" "$report"
  echo "================================================================"
  cat "$report"
  echo "================================================================"
  echo "gpu_check: report written to $report (logs in $logs)"
  exit "$1"
}

say "# dimtensor GPU check"
say ""
say "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
say "- source: \`$root\` ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout')$(git -C "$root" status --porcelain 2>/dev/null | grep -q . && echo ', with local changes'))"
say "- host: $(uname -n), $(nproc 2>/dev/null || echo '?') cores, build jobs $jobs"

# ---------------------------------------------------------------------------
# The GPU and the toolkit.
# ---------------------------------------------------------------------------
gpu_line=""
if command -v nvidia-smi >/dev/null 2>&1; then
  gpu_line=$(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>"$logs/nvidia-smi.err" | head -n 1)
  if [[ -z "$gpu_line" ]]; then  # older drivers lack compute_cap
    gpu_line=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>>"$logs/nvidia-smi.err" | head -n 1)
  fi
fi
if [[ -n "$gpu_line" ]]; then
  IFS=',' read -r gpu_name gpu_driver gpu_memory gpu_cc <<<"$gpu_line"
  gpu_name=$(echo "$gpu_name" | xargs)
  gpu_driver=$(echo "$gpu_driver" | xargs)
  gpu_memory=$(echo "$gpu_memory" | xargs)
  gpu_cc=$(echo "${gpu_cc:-}" | xargs)
  say "- GPU: $gpu_name, $gpu_memory, compute capability ${gpu_cc:-unknown}; driver $gpu_driver"
  cuda_driver=$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -n 1)
  [[ -n "$cuda_driver" ]] && say "- driver's CUDA: ${cuda_driver#CUDA Version: }"
else
  why="nvidia-smi not found"
  command -v nvidia-smi >/dev/null 2>&1 && why="nvidia-smi sees no GPU: $(head -c 300 "$logs/nvidia-smi.err" | tr '\n' ' ')"
  say "- GPU: **no GPU** ($why)"
  if [[ "${DIMTENSOR_GPU_CHECK_FORCE:-0}" != 1 ]]; then
    say ""
    say "Nothing was built: the check needs an NVIDIA GPU (DIMTENSOR_GPU_CHECK_FORCE=1 builds and runs anyway; the tests then report Skipped)."
    finish 2 "no GPU"
  fi
  say "- DIMTENSOR_GPU_CHECK_FORCE=1: building and running without a GPU"
fi

nvcc=${CUDACXX:-}
[[ -z "$nvcc" ]] && nvcc=$(command -v nvcc 2>/dev/null || true)
[[ -z "$nvcc" && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
if [[ -z "$nvcc" ]]; then
  say "- CUDA toolkit: **not found** (no \$CUDACXX, no nvcc on PATH, no /usr/local/cuda/bin/nvcc)"
  finish 3 "no CUDA toolkit"
fi
say "- CUDA toolkit: nvcc $("$nvcc" --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -n 1) ($nvcc)"
say "- CMake: $(cmake --version | head -n 1 | awk '{print $3}'); host compiler: $(${CXX:-c++} --version 2>/dev/null | head -n 1)"

# ---------------------------------------------------------------------------
# Configure and build only the CUDA targets.
# ---------------------------------------------------------------------------
architectures=${CMAKE_CUDA_ARCHITECTURES:-}
if [[ -z "$architectures" && "${gpu_cc:-}" =~ ^([0-9]+)\.([0-9]+)$ ]]; then
  architectures="${BASH_REMATCH[1]}${BASH_REMATCH[2]}-real"
fi
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
launchers=()
if command -v ccache >/dev/null 2>&1; then
  launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
arch_args=()
[[ -n "$architectures" ]] && arch_args=("-DCMAKE_CUDA_ARCHITECTURES=$architectures")

rm -rf "$build"
phase=$SECONDS
if ! CUDACXX="$nvcc" cmake -S "$root" -B "$build" "${generator[@]}" "${launchers[@]}" "${arch_args[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DDIMTENSOR_USE_CUDA=ON -DDIMTENSOR_BUILD_TESTS=ON \
  -DDIMTENSOR_BUILD_EXAMPLES=ON -DDIMTENSOR_BUILD_BENCHMARKS=ON -DDIMTENSOR_BUILD_DOCS=OFF \
  -DDIMTENSOR_CUDA_EXAMPLES=ON >"$logs/configure.log" 2>&1; then
  say ""
  say "## Configure: FAILED"
  block "$logs/configure.log" 40
  finish 1 "configure failed"
fi
configure_s=$((SECONDS - phase))
cuda_status=$(grep -m1 -- '-- dimtensor: CUDA ' "$logs/configure.log" | sed 's/^-- //')
say "- ${cuda_status:-dimtensor: no CUDA status line}"
if [[ "$cuda_status" != *"CUDA ON"* ]]; then
  say ""
  say "The build has no CUDA targets: $cuda_status"
  finish 3 "CUDA is off in CMake"
fi

targets=()
all_targets=$(cmake --build "$build" --target help 2>/dev/null)
for t in dimtensor_cuda_tests example_attention_scoring_cuda example_multihead_attention_cuda \
  example_nadaraya_watson_cuda bench_attention_bench_cuda; do
  if grep -qE "(^|[ /])$t(:| |$)" <<<"$all_targets"; then targets+=("$t"); fi
done
if ((${#targets[@]} == 0)); then
  say ""
  say "No CUDA targets in the build (is Catch2 or Google Benchmark missing?)."
  block "$logs/configure.log" 40
  finish 1 "no CUDA targets"
fi

# Keep going past a target that fails to compile: the others still run.
keep_going=(-k)
[[ ${#generator[@]} -gt 0 ]] && keep_going=(-k 0)
phase=$SECONDS
timeout 600 cmake --build "$build" --parallel "$jobs" --target "${targets[@]}" -- "${keep_going[@]}" >"$logs/build.log" 2>&1
build_rc=$?
build_s=$((SECONDS - phase))
status=0
built=()
unbuilt=()
for t in "${targets[@]}"; do
  if [[ -n "$(find "$build" -type f -perm -u+x -name "$t" -print -quit)" ]]; then built+=("$t"); else unbuilt+=("$t"); fi
done
say "- configure ${configure_s} s; build of ${#targets[@]} targets with $jobs jobs: ${build_s} s (exit status $build_rc)"
if ((${#unbuilt[@]} > 0)); then
  status=1
  say ""
  say "## Build: FAILED for ${unbuilt[*]}"
  block <(grep -E 'error|FAILED:' "$logs/build.log" | grep -v '^ccache\|nvcc -forward' | head -n 40)
fi

# ---------------------------------------------------------------------------
# Tests and examples (CTest, label cuda).
# ---------------------------------------------------------------------------
phase=$SECONDS
timeout 300 ctest --test-dir "$build" -L cuda --output-on-failure --timeout 240 >"$logs/ctest.log" 2>&1
ctest_rc=$?
ctest_s=$((SECONDS - phase))
# One line per test: " 3/18 Test #252: <name> ....   Passed    0.21 sec" (or ***Failed, ***Skipped, ***Not Run, ...).
results=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$logs/ctest.log")
passed=$(grep -cE ' Passed +[0-9.]+ sec' <<<"$results")
skipped=$(grep -cE '\*\*\*Skipped' <<<"$results")
failed=0
[[ -n "$results" ]] && failed=$(grep -cvE ' Passed +[0-9.]+ sec|\*\*\*Skipped' <<<"$results")
say ""
say "## Tests and examples (\`ctest -L cuda\`, ${ctest_s} s)"
say ""
say "- passed: $passed, failed: $failed, skipped: $skipped"
say "- $(grep -E '^[0-9]+% tests passed' "$logs/ctest.log" | tail -n 1)"
if ((ctest_rc != 0 || failed > 0)); then
  status=1
  say ""
  say "Failed:"
  block <(grep -vE ' Passed +[0-9.]+ sec|\*\*\*Skipped' <<<"$results")
fi
if ((skipped > 0)); then
  say ""
  reason=$("$build/tests/cuda/dimtensor_cuda_tests" 2>&1 | grep -m1 'SKIPPED: ')
  say "Skipped: ${reason:-see $logs/ctest.log}"
  [[ -n "$gpu_line" ]] && status=1  # with a GPU, nothing may skip
fi

say ""
say "### Example outputs (key lines)"
if [[ " ${built[*]} " != *" example_"* ]]; then
  say ""
  say "(no CUDA example was built)"
fi
for t in "${built[@]}"; do
  [[ "$t" == example_* ]] || continue
  name=${t#example_}
  name=${name%_cuda}
  out_dir="$build/example_output/${name}_cuda"
  mkdir -p "$out_dir"
  (cd "$root/examples/$name" && timeout 120 "$build/examples/$t" "$out_dir") >"$logs/$t.log" 2>&1
  rc=$?
  say ""
  say "**$t** (exit status $rc)"
  block <(grep -E 'largest difference|shape|epoch|trained w|initial w|correlation|mean absolute|checks? (passed|failed)|SKIPPED|error|what\(\)' "$logs/$t.log" | head -n 25)
done

# ---------------------------------------------------------------------------
# The benchmark, briefly.
# ---------------------------------------------------------------------------
if [[ " ${built[*]} " == *" bench_attention_bench_cuda "* ]]; then
  phase=$SECONDS
  timeout 240 "$build/benchmarks/bench_attention_bench_cuda" --benchmark_min_time=0.2 \
    --benchmark_counters_tabular=true >"$logs/bench.log" 2>&1
  bench_rc=$?
  say ""
  say "## Benchmark (\`bench_attention_bench_cuda --benchmark_min_time=0.2\`, $((SECONDS - phase)) s, exit status $bench_rc)"
  say ""
  block <(grep -vE '^\*\*\*WARNING|^-+$|^Run on|^CPU Caches|^  L[0-9]|^Load Average' "$logs/bench.log") 30
  if ((bench_rc != 0)); then status=1; fi
  if grep -q 'SKIPPED' "$logs/bench.log" && [[ -n "$gpu_line" ]]; then status=1; fi
else
  say ""
  say "## Benchmark: not built"
fi

if ((status == 0)); then
  finish 0 "all passed"
else
  finish 1 "FAILURES (see above)"
fi
