#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds everything with the CI preset (warnings are errors)
# and runs the whole test suite through CTest. Test fixtures are generated on the way.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci --parallel 2
