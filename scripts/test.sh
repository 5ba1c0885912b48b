#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds everything with the CI preset (warnings are errors)
# and runs the whole test suite through CTest (the zoo included); then builds and tests the same
# sources without LibTorch (preset notorch). Test fixtures are generated on the way. Then every
# libFuzzer target runs for 60 seconds (scripts/fuzz.sh; FUZZ_SECONDS=0 skips that).
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
if ((${FUZZ_SECONDS:-60} > 0)); then
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
fi
