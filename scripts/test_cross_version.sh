#!/usr/bin/env bash
# The cross-version checks between the three builds scripts/test.sh made: LibTorch 1.13 (Debian
# 12, build/ci here), 2.6 (the Debian 13 root) and 2.14 (the Debian testing root), each on the
# archives the other two versions' torch wrote (tests/cross_version/cross_version.py):
#   - inspect-model's records (plain and --all) of all three archive sets, identical from every
#     build: the built-in reader describes an archive alike whichever torch wrote it and whichever
#     LibTorch and libzip the binary was built against;
#   - against this build's own torch's view of the other versions' archives (compare_inspect_model,
#     compare_capture), where that torch loads them: an older torch may not load a newer archive;
#   - its LibTorch loading every archive its torch loads, and where it lacks an operator (LibTorch
#     1.13 and 2.6 on torch 2.14's TransformerEncoder) capture exits 1 with one line naming the
#     archive and the operator.
# Each build's checks run as a lane, the three side by side; each lane's output is shown when all
# are done. Needs root (chroot) and the three builds: run scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/debian_root.sh
source scripts/steps.sh
steps_begin
need_root_user

# the archive sets, oldest torch first, and the root each was built in ("" for this machine)
SETS=(torch113 torch26 torch214)
declare -A SET_ROOT=([torch113]="" [torch26]=debian13 [torch214]=testing)
declare -A SET_LIBTORCH=([torch113]=1.13 [torch26]=2.6 [torch214]=2.14)

root_of() { root_config "$1" && echo "$ROOT_DIR"; }

for set in "${SETS[@]}"; do
  if [[ -n ${SET_ROOT[$set]} ]]; then build=$(root_of "${SET_ROOT[$set]}")/work/src/build/ci; else build=build/ci; fi
  if [[ ! -d $build/fixtures || ! -x $build/apps/vin-inspect ]]; then
    echo "$0: $build (the LibTorch ${SET_LIBTORCH[$set]} build and its fixtures) is missing: run scripts/test.sh" >&2
    exit 1
  fi
done

# A root sees the other builds' archives as copies under /work/sets/NAME
for set in "${SETS[@]}"; do
  [[ -n ${SET_ROOT[$set]} ]] || continue
  root=$(root_of "${SET_ROOT[$set]}")
  rm -rf "$root/work/sets" "$root/work/exchange"
  mkdir -p "$root/work/sets" "$root/work/exchange"
  for other in "${SETS[@]}"; do
    [[ $other != "$set" ]] || continue
    if [[ -n ${SET_ROOT[$other]} ]]; then from=$(root_of "${SET_ROOT[$other]}")/work/src/build/ci; else from=build/ci; fi
    mkdir -p "$root/work/sets/$other"
    cp -a "$from/fixtures" "$from/capture_fixtures" "$root/work/sets/$other/"
  done
done

# where set OTHER's build tree is, seen from the lane of set LANE
set_path() {
  local lane=$1 other=$2
  if [[ -z ${SET_ROOT[$lane]} ]]; then
    if [[ -z ${SET_ROOT[$other]} ]]; then echo build/ci; else echo "$(root_of "${SET_ROOT[$other]}")/work/src/build/ci"; fi
  elif [[ $lane == "$other" ]]; then
    echo /work/src/build/ci
  else
    echo "/work/sets/$other"
  fi
}

# the checks of one build (set LANE's), in its root or here; records under EXCHANGE/libtorchX.Y
lane() {
  local lane=$1 exchange=$2 run=() src=.
  if [[ -n ${SET_ROOT[$lane]} ]]; then
    run=(in_root "$(root_of "${SET_ROOT[$lane]}")" env -C /work/src)
    src=/work/src
  fi
  local binary=build/ci/apps/vin-inspect sets=() older_first=1
  for other in "${SETS[@]}"; do sets+=(--set "$other=$(set_path "$lane" "$other")"); done
  "${run[@]}" /usr/bin/python3 "$src/tests/cross_version/cross_version.py" records --binary "$binary" \
    --out "$exchange/libtorch${SET_LIBTORCH[$lane]}" "${sets[@]}"
  local others=()
  for other in "${SETS[@]}"; do
    if [[ $other == "$lane" ]]; then older_first=0; continue; fi
    local path skip=()
    path=$(set_path "$lane" "$other")
    others+=(--set "$other=$path")
    # a newer torch's archives: this torch may not load some of them (an operator it lacks)
    if ((older_first == 0)); then skip=(--skip-unloadable); fi
    "${run[@]}" /usr/bin/python3 "$src/tests/reference/compare_inspect_model.py" --binary "$binary" \
      --fixtures "$path/fixtures" --capture-fixtures "$path/capture_fixtures" "${skip[@]}"
    "${run[@]}" /usr/bin/python3 "$src/tests/reference/compare_capture.py" --binary "$binary" \
      --fixtures "$path/capture_fixtures" --jobs 2 "${skip[@]}"
  done
  "${run[@]}" /usr/bin/python3 "$src/tests/cross_version/cross_version.py" libtorch --binary "$binary" \
    "${others[@]}"
}

cross_version_checks() {
  local logs=build/cross_version
  rm -rf "$logs"
  mkdir -p "$logs/exchange"
  declare -A pids statuses
  # each lane in the background, so that set -e stops it at its first failure (a function run
  # under `||` would go on past it)
  for set in "${SETS[@]}"; do
    local exchange=$PWD/$logs/exchange
    [[ -z ${SET_ROOT[$set]} ]] || exchange=/work/exchange
    lane "$set" "$exchange" >"$logs/$set.log" 2>&1 &
    pids[$set]=$!
  done
  local failed=0
  for set in "${SETS[@]}"; do
    statuses[$set]=0
    wait "${pids[$set]}" || statuses[$set]=$?
    echo "-- LibTorch ${SET_LIBTORCH[$set]} on the other versions' archives:"
    cat "$logs/$set.log"
    if ((statuses[$set] != 0)); then failed=1; fi
  done
  if ((failed)); then
    echo "$0: cross-version checks failed (above)" >&2
    return 1
  fi
  # every build's records of every archive, side by side
  local records=()
  for set in "${SETS[@]}"; do
    if [[ -n ${SET_ROOT[$set]} ]]; then
      records+=("$(root_of "${SET_ROOT[$set]}")/work/exchange/libtorch${SET_LIBTORCH[$set]}")
    else
      records+=("$logs/exchange/libtorch${SET_LIBTORCH[$set]}")
    fi
  done
  for ((i = 1; i < ${#records[@]}; ++i)); do
    /usr/bin/python3 tests/cross_version/cross_version.py identical "${records[0]}" "${records[$i]}"
  done
}
echo "$0: cross-version checks" >&2
step "cross-version checks (LibTorch 1.13, 2.6, 2.14)" cross_version_checks
echo "$0: cross-version checks passed" >&2
