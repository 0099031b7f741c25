#!/usr/bin/env bash
# The sanitizer and fuzzing stage of CI, run after the normal test suite:
#   1. the ASan + UBSan build (preset "asan", build-asan/) of what `ctest -L sanitize` needs, then
#      those tests: the unit tests, the 1- and 2-rank decks, and the parser's fuzz driver;
#   2. where clang++ has libFuzzer, the "fuzz" preset (build-fuzz/) and libFuzzer on the option
#      and deck parser for a bounded time, starting from tests/fuzz/corpus/options.
# Any finding fails the script. The build folders are kept, so a re-run rebuilds only what changed.
#   bash tools/sanitize_and_fuzz.sh [FUZZ_SECONDS]   # default $FUZZ_SECONDS or 60; 0: no libFuzzer
set -euo pipefail
cd "$(dirname "$0")/.."

fuzz_seconds=${1:-${FUZZ_SECONDS:-60}}
if [[ ! $fuzz_seconds =~ ^[0-9]+$ ]]; then
  echo "usage: $0 [FUZZ_SECONDS]" >&2
  exit 2
fi
jobs=$(nproc)
# MPI as root (containers, CI) and oversubscribed runs that must not busy-poll.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1

times=()
timed() {  # timed NAME COMMAND...: runs it, then prints and records how long it took
  local name=$1 start=$SECONDS
  shift
  echo "==== $name"
  "$@"
  times+=("$(printf '%-32s %4d s' "$name" $((SECONDS - start)))")
  echo "==== $name: $((SECONDS - start)) s"
}
summary() {
  echo "==== elapsed"
  printf '  %s\n' "${times[@]}"
}
trap summary EXIT

timed "asan configure" cmake --preset asan
timed "asan build" cmake --build --preset asan -j "$jobs"
timed "asan tests (ctest -L sanitize)" ctest --preset asan -j "$jobs"

if ((fuzz_seconds == 0)); then
  echo "==== libFuzzer: skipped (0 seconds asked for)"
  exit 0
fi
# libFuzzer needs clang and its fuzzer runtime: try to link an empty fuzz target.
has_libfuzzer() {
  command -v clang++ > /dev/null || return 1
  local dir
  dir=$(mktemp -d)
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
    > "$dir/t.cpp"
  clang++ -fsanitize=fuzzer "$dir/t.cpp" -o "$dir/t" > /dev/null 2>&1
  local status=$?
  rm -rf "$dir"
  return $status
}
if ! has_libfuzzer; then
  echo "==== libFuzzer: skipped (no clang++ with -fsanitize=fuzzer); the GCC driver ran in ctest"
  exit 0
fi

timed "fuzz configure" cmake --preset fuzz
timed "fuzz build" cmake --build --preset fuzz -j "$jobs"

# libFuzzer adds what it finds to its first folder: a scratch one, kept between runs so that a
# re-run goes on from there; the repository's corpus is only read.
run=build-fuzz/fuzz-run
mkdir -p "$run/corpus"
rm -rf "$run/artifacts" && mkdir "$run/artifacts"
fuzz() {
  build-fuzz/tests/fuzz/fuzz_options -max_total_time="$fuzz_seconds" -max_len=4096 -timeout=10 \
    -dict=tests/fuzz/options.dict -artifact_prefix="$run/artifacts/" -print_final_stats=1 \
    "$run/corpus" tests/fuzz/corpus/options > "$run/fuzz.log" 2>&1 && return 0
  tail -n 60 "$run/fuzz.log"
  # Each finding decoded into the deck and command line it stands for, and replayed by the GCC
  # sanitizer build's driver.
  for input in "$run"/artifacts/*; do
    echo "==== finding: $input"
    build-asan/tests/fuzz/fuzz_options -print=1 -runs=0 -artifact_prefix="$run/artifacts/replay-" \
      "$input" || true
  done
  echo "==== libFuzzer found a problem; full log: $run/fuzz.log"
  return 1
}
timed "libFuzzer (${fuzz_seconds} s)" fuzz
grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" "$run/fuzz.log"
