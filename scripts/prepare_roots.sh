#!/usr/bin/env bash
# Makes the two Debian roots scripts/test.sh needs, where they are missing or stale: the Debian 13
# root of the second configuration and the clean Debian 12 tarball the packages are installed in
# (scripts/debian_root.sh names both). test.sh runs this in the background while the Debian 12
# suite runs; test_debian13.sh and test_packages.sh make what is still missing themselves.
# Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/debian_root.sh
source scripts/steps.sh
steps_begin
need_root_user
step "background: Debian 13 root (mmdebstrap)" make_root trixie "$DEBIAN13_ROOT" "$DEBIAN13_PACKAGES"
step "background: clean Debian 12 root (mmdebstrap)" root_tarball bookworm "$DEBIAN12_TARBALL" ""
