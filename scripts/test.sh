#!/usr/bin/env bash
# The whole check, as CI runs it (.ci/run):
#   1. missing Debian packages are installed (scripts/deps.sh);
#   2. release build (preset `ci`: the `release` preset's tests, examples,
#      benchmarks, docs and CUDA targets, less the unit test program), then
#      every CTest test: parity, compile-fail, header, package, example,
#      CUDA (skipped without a GPU), dist (under mpirun -np 2) and
#      benchmark-smoke tests;
#   3. BLIS build (preset `blis`: DIMTENSOR_BLAS=BLIS) of the unit tests of
#      the matrix products and of the fused attention kernels, run under
#      CTest: the configure-time BLAS choice, on another BLAS than OpenBLAS;
#   4. sanitizer build (preset `asan`: AddressSanitizer + UBSan at -O0) of
#      the unit tests, run under CTest (the parity tests run in step 2 only);
#   5. ThreadSanitizer build (preset `tsan`) of the concurrency tests
#      (tests/tsan), run under CTest;
#   6. the libFuzzer targets (preset `fuzz`, clang: tests/fuzz), each run for
#      DIMTENSOR_FUZZ_SECONDS (default 60) on its seeds, when clang's
#      libFuzzer runtime is present (skipped with a note otherwise).
# The unit tests are built once, in step 4 (five files again in step 3):
# under the sanitizers GCC 12 compiles a test file 4 times slower at -O2 -g
# than without them, and at -O0 -g1 about as fast as a release build
# (docs/building.md, "CI").
# Exits nonzero when any build or test fails; the last line sums up the tests.
#   DIMTENSOR_JOBS=N            parallel jobs (default: number of cores)
#   DIMTENSOR_FUZZ_SECONDS=S    how long each fuzz target runs (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
scripts/deps.sh
source scripts/env.sh
# CTest runs $jobs tests at once, each with OpenMP's threads (one per core).
# libgomp's threads spin while they wait for the next parallel region, and
# the spinning threads of one test take the cores the other test needs: on
# 2 cores the translation example's CTest run took 146 s beside another
# program and 14 s with threads that sleep while they wait (docs/building.md,
# "CI"). The tests' threads sleep:
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

failures=()
summaries=()
passed_total=0
failed_total=0

# run_phase <name> <preset> [cmake options…]: configure, build and test one preset.
run_phase() {
  local name=$1 preset=$2 phase_start=$SECONDS
  shift 2
  local log="build/${preset}-ctest.log"
  echo
  echo "=== ${name}: configure, build and test (preset ${preset}, ${jobs} jobs)"
  mkdir -p build
  if ! cmake --preset "$preset" "${cmake_launcher[@]}" "$@"; then
    failures+=("${name}: configure failed")
    return
  fi
  if ! cmake --build --preset "$preset" --parallel "$jobs"; then
    failures+=("${name}: build failed")
    return
  fi
  local rc
  ctest --preset "$preset" --parallel "$jobs" 2>&1 | tee "$log"
  rc=$?  # ctest's status: pipefail is on
  local line
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
  if [[ "$line" =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
    local failed=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
    passed_total=$((passed_total + total - failed))
    failed_total=$((failed_total + failed))
  fi
  summaries+=("${name} (${preset}, $((SECONDS - phase_start)) s): ${line:-no ctest summary}")
  if ((rc != 0)); then
    failures+=("${name}: ctest failed (log: ${log})")
  fi
}

# Whether clang can link a libFuzzer target here.
fuzzer_available() {
  command -v clang++ >/dev/null 2>&1 || return 1
  local probe
  probe=$(mktemp -d)
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
    >"$probe/probe.cpp"
  clang++ -fsanitize=fuzzer "$probe/probe.cpp" -o "$probe/probe" >/dev/null 2>&1
  local rc=$?
  rm -rf "$probe"
  return $rc
}

set +e
run_phase "release" ci
run_phase "blis" blis
run_phase "sanitizers" asan
run_phase "threads" tsan
if fuzzer_available; then
  run_phase "fuzzing" fuzz "-DDIMTENSOR_FUZZ_SECONDS=${DIMTENSOR_FUZZ_SECONDS:-60}"
  # Each target's executions and findings (tests/fuzz/run_fuzzer.cmake).
  for summary_file in build/fuzz/tests/fuzz/work/*/summary.txt; do
    [[ -f "$summary_file" ]] && summaries+=("  $(cat "$summary_file")")
  done
else
  summaries+=("fuzzing (fuzz): skipped, clang's libFuzzer runtime is not installed (libclang-rt-14-dev)")
fi
set -e

echo
echo "=== summary ($((SECONDS - started)) s in all)"
for summary in "${summaries[@]}"; do
  echo "  ${summary}"
done
for failure in "${failures[@]}"; do
  echo "  FAILED ${failure}"
done
echo "total: ${passed_total} passed, ${failed_total} failed"
((${#failures[@]} == 0))
