#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds everything with the CI preset (warnings are errors)
# and runs the whole test suite through CTest (the zoo included); then builds and tests the same
# sources without LibTorch (preset notorch). Test fixtures are generated on the way. Then:
#   - scripts/test_packages.sh: the Debian packages made from build/ci, installed with apt-get
#     in a clean Debian 12 root, run there;
#   - scripts/test_debian13.sh: the second configuration, Debian 13 (LibTorch 2.6, GCC 14), whole
#     suite, and the cross-version checks between the two builds;
#   - scripts/fuzz.sh: every libFuzzer target for 60 seconds (FUZZ_SECONDS=0 skips that).
# The Debian roots need root (CI runs as root); VIN_ROOTS=0 leaves out the packages and Debian 13
# steps on a machine where that is not possible.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci --parallel 2
# the same sources without LibTorch: vin_core and the binary alone (capture says it is missing)
cmake --preset notorch
cmake --build --preset notorch
ctest --preset notorch --parallel 2
if [[ ${VIN_ROOTS:-1} != 0 ]]; then
  bash scripts/test_packages.sh build/ci
  bash scripts/test_debian13.sh
fi
if ((${FUZZ_SECONDS:-60} > 0)); then
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
fi
