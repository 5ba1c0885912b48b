#!/usr/bin/env bash
# One of the CI configurations built and tested in a Debian root (scripts/debian_root.sh's table:
# debian13 = LibTorch 2.6, GCC 14; testing = LibTorch 2.14, GCC 16, C++20):
#
#   scripts/test_in_root.sh NAME [CTEST ARGUMENTS...]
#
# Makes the root once with mmdebstrap (cached in /var/cache/vin-inspect/NAME, about 2 GB), copies
# this work tree into it, builds the ci preset there (warnings are errors) and runs CTest with the
# arguments given (scripts/test.sh says which suites run where: `-LE zoo` leaves the zoo out), on
# fixtures written by that root's torch. The cross-version checks between the builds are
# scripts/test_cross_version.sh's. Needs root (mmdebstrap, chroot). VIN_ROOT_KEEP_BUILD=1 keeps
# the root's previous build tree (faster while iterating; CI builds from scratch).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
source scripts/debian_root.sh
source scripts/steps.sh
steps_begin

if (($# < 1)); then
  echo "usage: $0 NAME [CTEST ARGUMENTS...] (NAME: $ROOT_NAMES)" >&2
  exit 2
fi
name=$1
shift
root_config "$name"
ROOT=$ROOT_DIR

step "$ROOT_LABEL: root (mmdebstrap, once)" make_root "$ROOT_SUITE" "$ROOT" "$ROOT_PACKAGES"

# the work tree (committed or not, .git included for the layout test), without build trees;
# extracted with the time of now (-m): sources older than the root's objects would let ninja
# link stale ones when the build is kept
src=$ROOT/work/src
mkdir -p "$src"
find "$src" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
if [[ ${VIN_ROOT_KEEP_BUILD:-0} != 1 ]]; then rm -rf "$src/build"; fi
tar -C "$REPO" --exclude=./build -cf - . | tar -C "$src" -xmf -

echo "$0: building and testing in $ROOT_LABEL" >&2
step "$ROOT_LABEL: build (ci)" in_root "$ROOT" bash -euc '
  cd /work/src
  git config --global --add safe.directory /work/src
  cmake --preset ci >/dev/null
  cmake --build --preset ci
'
rm -f "$src/build/ci/zoo_times.txt"
ctest_step "$ROOT_LABEL: CTest (ci${*:+ $*})" in_root "$ROOT" bash -euc '
  cd /work/src
  ctest --preset ci --parallel 2 "$@"
' ctest "$@"
zoo_step_note "$src/build/ci/zoo_times.txt"
echo "$0: $ROOT_LABEL suite passed" >&2
