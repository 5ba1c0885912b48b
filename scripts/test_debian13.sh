#!/usr/bin/env bash
# The second CI configuration: Debian 13 (LibTorch 2.6, torchvision 0.21, GCC 14, libzip 1.11,
# Python 3.13). Makes once a Debian 13 root with mmdebstrap (cached in VIN_DEBIAN13_ROOT, default
# /var/cache/vin-inspect/debian13; about 2 GB), copies this work tree into it, builds the ci preset
# there (warnings are errors) and runs the whole suite, the zoo included, on fixtures written by
# torch 2.6. Then the cross-version checks (tests/cross_version/cross_version.py) between that
# build and the Debian 12 one in build/ci, which scripts/test.sh made first:
#   - archives written by torch 1.13 read by the LibTorch 2.6 build and the reverse: inspect-model
#     identical on both sides; the other side's torch reference for inspect-model and capture;
#     LibTorch loading every archive it has the operators for, and naming the operator it lacks
#     for the ones it does not.
# Needs root (mmdebstrap, chroot). VIN_DEBIAN13_KEEP_BUILD=1 keeps the root's previous build tree
# (faster while iterating; CI builds from scratch).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
source scripts/debian_root.sh

source scripts/steps.sh
steps_begin
ROOT=$DEBIAN13_ROOT

if [[ ! -d build/ci/fixtures || ! -x build/ci/apps/vin-inspect ]]; then
  echo "$0: build/ci (the Debian 12 build and its fixtures) is missing: run scripts/test.sh" >&2
  exit 1
fi

step "Debian 13: root (mmdebstrap, once)" make_root trixie "$ROOT" "$DEBIAN13_PACKAGES"

# the work tree (committed or not, .git included for the layout test), without build trees
copy_work_tree() {
  local src=$ROOT/work/src
  mkdir -p "$src"
  find "$src" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
  if [[ ${VIN_DEBIAN13_KEEP_BUILD:-0} != 1 ]]; then rm -rf "$src/build"; fi
  tar -C "$REPO" --exclude=./build -cf - . | tar -C "$src" -xf -
  # the Debian 12 build's archives (written by torch 1.13), for the cross-version checks
  rm -rf "$ROOT/work/d12"
  mkdir -p "$ROOT/work/d12"
  cp -a build/ci/fixtures build/ci/capture_fixtures "$ROOT/work/d12/"
}
copy_work_tree
src=$ROOT/work/src

echo "$0: building and testing in Debian 13" >&2
step "Debian 13: build (ci)" in_root "$ROOT" bash -euc '
  cd /work/src
  git config --global --add safe.directory /work/src
  cmake --preset ci >/dev/null
  cmake --build --preset ci
'
ctest_step "Debian 13: CTest (ci), the zoo included" in_root "$ROOT" bash -euc '
  cd /work/src
  ctest --preset ci --parallel 2
'
zoo_step_note "$src/build/ci/zoo_times.txt"

# The cross-version checks run as two lanes, one per build, side by side (each is mostly one
# Python process at a time); each lane's output is kept and shown when both are done.
d13_lane() {  # LibTorch 2.6 (in the Debian 13 root) on both versions' archives
  local cross=tests/cross_version/cross_version.py
  # inspect-model's records of both archive sets, compared byte for byte with the other lane's
  in_root "$ROOT" /usr/bin/python3 "/work/src/$cross" records \
    --binary /work/src/build/ci/apps/vin-inspect --out /work/exchange/libtorch26 \
    --set torch113=/work/d12 --set torch26=/work/src/build/ci
  # against torch 2.6's view of torch 1.13's archives, and LibTorch 2.6 loading them: identical
  # records where it can, the missing operator named where it cannot
  in_root "$ROOT" bash -euc '
    cd /work/src
    /usr/bin/python3 tests/reference/compare_inspect_model.py --binary build/ci/apps/vin-inspect \
      --fixtures /work/d12/fixtures --capture-fixtures /work/d12/capture_fixtures
    /usr/bin/python3 tests/reference/compare_capture.py --binary build/ci/apps/vin-inspect \
      --fixtures /work/d12/capture_fixtures --jobs 2
    /usr/bin/python3 tests/cross_version/cross_version.py libtorch \
      --binary build/ci/apps/vin-inspect --set torch113=/work/d12
  '
}
d12_lane() {  # LibTorch 1.13 (build/ci, here) on both versions' archives
  local cross=tests/cross_version/cross_version.py exchange=$1
  local d13_fixtures=$src/build/ci/fixtures d13_capture=$src/build/ci/capture_fixtures
  /usr/bin/python3 "$cross" records --binary build/ci/apps/vin-inspect --out "$exchange/libtorch113" \
    --set torch113=build/ci --set torch26="$src/build/ci"
  /usr/bin/python3 tests/reference/compare_inspect_model.py --binary build/ci/apps/vin-inspect \
    --fixtures "$d13_fixtures" --capture-fixtures "$d13_capture" --skip-unloadable
  /usr/bin/python3 tests/reference/compare_capture.py --binary build/ci/apps/vin-inspect \
    --fixtures "$d13_capture" --jobs 2
  /usr/bin/python3 "$cross" libtorch --binary build/ci/apps/vin-inspect --set torch26="$src/build/ci"
}
cross_version_checks() {
  local exchange=$ROOT/work/exchange
  rm -rf "$exchange"
  mkdir -p "$exchange"
  # each lane in the background, so that set -e stops it at its first failure (a function run
  # under `||` would go on past it)
  d13_lane >"$exchange/d13.log" 2>&1 &
  local d13_pid=$!
  d12_lane "$exchange" >"$exchange/d12.log" 2>&1 &
  local d12_pid=$! d13_status=0 d12_status=0
  wait "$d13_pid" || d13_status=$?
  wait "$d12_pid" || d12_status=$?
  echo "-- LibTorch 2.6 (Debian 13) on both versions' archives:"
  cat "$exchange/d13.log"
  echo "-- LibTorch 1.13 (Debian 12) on both versions' archives:"
  cat "$exchange/d12.log"
  if ((d13_status != 0 || d12_status != 0)); then
    echo "$0: cross-version checks failed (above)" >&2
    return 1
  fi
  /usr/bin/python3 tests/cross_version/cross_version.py identical \
    "$exchange/libtorch113" "$exchange/libtorch26"
}
echo "$0: cross-version checks" >&2
step "Debian 12 and 13: cross-version checks" cross_version_checks
echo "$0: Debian 13 suite and cross-version checks passed" >&2
