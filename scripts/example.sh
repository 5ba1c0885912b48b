#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds vin-inspect (release preset) and describes the bundled
# example archive (examples/convnet.pt) as a table. Extra arguments replace "--format table".
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset release -DVIN_BUILD_TESTS=OFF >/dev/null
cmake --build --preset release
if (($# == 0)); then set -- --format table; fi
exec build/release/apps/vin-inspect inspect-model examples/convnet.pt "$@"
