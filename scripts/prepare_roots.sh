#!/usr/bin/env bash
# Makes the Debian roots scripts/test.sh needs, where they are missing or stale: the roots of the
# Debian 13 and Debian testing configurations and the clean Debian 12 tarball the packages are
# installed in (scripts/debian_root.sh names them). test.sh runs this in the background while the
# Debian 12 suite runs; test_in_root.sh and test_packages.sh make what is still missing themselves.
# Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/debian_root.sh
source scripts/steps.sh
steps_begin
need_root_user
for name in $ROOT_NAMES; do
  root_config "$name"
  step "background: $ROOT_LABEL root (mmdebstrap)" make_root "$ROOT_SUITE" "$ROOT_DIR" "$ROOT_PACKAGES"
done
step "background: clean Debian 12 root (mmdebstrap)" root_tarball bookworm "$DEBIAN12_TARBALL" ""
