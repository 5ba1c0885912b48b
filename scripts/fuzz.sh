#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz: the distribution's clang, ASan + UBSan, tests/fuzz) and runs each
# for SECONDS (default 60), two at a time, seeded from the test fixtures (tests/fuzz/fuzz_seeds.py).
# With an odd number of targets the last one runs as two processes of SECONDS/2 side by side on
# its one corpus (as libFuzzer's -jobs=2 would), so that no core waits through a last round.
# A crash, leak, timeout or out-of-memory in any target fails the run; its input is left under
# build/fuzz/findings/<target>/ and belongs, once fixed, in tests/fuzz/regressions/<target>/,
# which the ordinary test suite replays.
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 600 yaml npz
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(npy npz yaml archive_config records pickle archive_structure archive_model torch_save
    export_program safetensors torch_save_weights scan)
fi

source scripts/steps.sh
steps_begin

bash scripts/setup.sh
step "fuzz: build (clang, ASan + UBSan)" bash -c 'cmake --preset fuzz >/dev/null && cmake --build --preset fuzz'
# seeds come from the fixtures of a build tree that has them (the CI build, when test.sh ran
# first), else from fixtures generated in the fuzz tree
fixtures_from=""
for tree in build/ci build/release build/debug build/fuzz; do
  if [[ -f $tree/fixtures/.generated ]]; then fixtures_from=$tree; break; fi
done
if [[ -z $fixtures_from ]]; then
  cmake --build build/fuzz --target vin_fixtures
  fixtures_from=build/fuzz
fi
/usr/bin/python3 tests/fuzz/fuzz_seeds.py "$fixtures_from" build/fuzz/seeds

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TMPDIR="$PWD/build/fuzz/tmp"  # the targets' scratch files
mkdir -p "$TMPDIR"

run_one() {  # run_one NAME SECONDS [PART]: PART names one of two processes sharing the corpus
  local name=$1 seconds=$2 part=${3:-}
  local corpus=build/fuzz/corpus/$name findings=build/fuzz/findings/$name
  local log=build/fuzz/$name${part:+.$part}.log what=$name${part:+ (process $part of 2)}
  mkdir -p "$corpus" "$findings"
  local max_len=65536
  [[ $name == archive_* ]] && max_len=$((256 * 1024))
  # the first folder is the working corpus (grows); seeds and regressions are read only (git
  # keeps no empty folder: a target without regressions has none)
  local regressions=()
  [[ -d tests/fuzz/regressions/$name ]] && regressions=(tests/fuzz/regressions/"$name")
  if build/fuzz/tests/fuzz/${name}_fuzzer -max_total_time="$seconds" -max_len=$max_len \
    -timeout=30 -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" build/fuzz/seeds/"$name" \
    "${regressions[@]}" >"$log" 2>&1; then
    echo "fuzz: $what: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds} s, no finding"
  else
    echo "fuzz: $what: FINDING ($log, inputs under $findings/)"
    grep -m3 -E "ERROR|SUMMARY|terminate|uncaught" "$log" || tail -5 "$log"
    return 1
  fi
}
export -f run_one

# one line per process: NAME SECONDS [PART]
jobs=()
for target in "${targets[@]}"; do jobs+=("$target $seconds"); done
if ((${#targets[@]} % 2 == 1 && seconds >= 2)); then
  last=${targets[-1]}
  unset 'jobs[-1]'
  jobs+=("$last $((seconds / 2)) 1" "$last $((seconds - seconds / 2)) 2")
fi
step "fuzz: ${#targets[@]} targets, ${seconds} s each, two at a time" \
  xargs -a <(printf '%s\n' "${jobs[@]}") -P 2 -L 1 bash -c 'run_one "$@"' run_one
