#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds the vin-inspect binary (release preset) and describes
# the bundled example archive (examples/convnet.pt) as a table. Extra arguments replace
# "--format table". The target is the binary alone, which reads archives without LibTorch; the
# LibTorch plugin that capture, compare and profile load comes with a build without --target
# (docs/building.md: the first build's times).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset release -DVIN_BUILD_TESTS=OFF >/dev/null
cmake --build --preset release --target vin-inspect
if (($# == 0)); then set -- --format table; fi
build/release/apps/vin-inspect inspect-model examples/convnet.pt "$@"
if [[ ! -e build/release/apps/libvin_torch_plugin.so ]]; then
  echo "example: built the binary only; 'cmake --build --preset release' adds the LibTorch" \
    "plugin that capture, compare and profile load" >&2
fi
