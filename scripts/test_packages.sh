#!/usr/bin/env bash
# The Debian packages as a user gets them: makes them from a build tree (cpack -G DEB; default
# build/ci, which scripts/test.sh built first), then in a throwaway copy of a clean Debian 12 root
# (made once with mmdebstrap: /var/cache/vin-inspect/debian12-clean.tar, or VIN_DEBIAN12_TARBALL)
# installs them with `apt-get install ./x.deb` and checks that:
#   - vin-inspect alone installs without LibTorch and a few MB, `vin-inspect model` describes the
#     bundled example exactly as the build tree's binary does, and capture says to install
#     vin-inspect-torch;
#   - with vin-inspect-torch, capture gives the build tree's records of the same inputs.
# Needs root (mmdebstrap, chroot). Prints `N passed, M failed`; exits 0 only when all pass.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/debian_root.sh
source scripts/steps.sh
steps_begin
need_root_user

BUILD=${1:-build/ci}
TARBALL=$DEBIAN12_TARBALL
binary=$BUILD/apps/vin-inspect

rm -f "$BUILD"/*.deb
step "packages: cpack -G DEB" bash -c "cd '$BUILD' && cpack -G DEB >/dev/null"
debs=("$BUILD"/vin-inspect_*.deb)
torch_debs=("$BUILD"/vin-inspect-torch_*.deb)
for deb in "${debs[@]}" "${torch_debs[@]}"; do
  echo "$0: $(basename "$deb"): $(du -h "$deb" | cut -f1); Depends: $(dpkg-deb -f "$deb" Depends)" >&2
done

step "packages: clean Debian 12 root (mmdebstrap, once)" root_tarball bookworm "$TARBALL" ""
work=$(mktemp -d /var/tmp/vin-packages.XXXXXX)
steps_at_exit 'rm -rf "$work"'
tar -C "$work/" -xf "$TARBALL"
mkdir -p "$work/check"
cp "${debs[0]}" "${torch_debs[0]}" examples/convnet.pt "$work/check/"
/usr/bin/python3 -c '
import numpy, sys
numpy.random.seed(0)
numpy.savez(sys.argv[1], images=numpy.random.randn(2, 3, 32, 32).astype(numpy.float32))' \
  "$work/check/images.npz"
"$binary" model examples/convnet.pt --format table >"$work/check/expected_model.txt"
"$binary" capture examples/convnet.pt --inputs "$work/check/images.npz" >"$work/check/expected_capture.jsonl"

step "packages: installed and run in a clean Debian 12" in_root "$work" bash -uc '
  cd /check
  passed=0 failed=0
  check() {  # check NAME COMMAND...: passes when COMMAND succeeds
    local name=$1; shift
    if "$@"; then passed=$((passed + 1)); echo "PASS $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
  }
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends ./vin-inspect_*.deb >apt_cli.log 2>&1
  check "vin-inspect installs" bash -c "dpkg -s vin-inspect >/dev/null"
  grep -E "^Need to get|^After this operation" apt_cli.log | sed "s/^/  vin-inspect: /"
  check "no LibTorch without vin-inspect-torch" bash -c "! dpkg -l | grep -q libtorch"
  check "the man page is installed" test -f /usr/share/man/man1/vin-inspect.1
  vin-inspect model convnet.pt --format table >model.txt 2>model.err
  check "vin-inspect model describes the example as the build tree does" cmp -s model.txt expected_model.txt
  vin-inspect capture convnet.pt --inputs images.npz >/dev/null 2>capture.err
  status=$?
  check "capture without the plugin: exit 1 naming vin-inspect-torch" \
    bash -c "[[ $status == 1 ]] && grep -q vin-inspect-torch capture.err"
  apt-get install -y -q --no-install-recommends ./vin-inspect-torch_*.deb >apt_torch.log 2>&1
  check "vin-inspect-torch installs (with LibTorch)" bash -c "dpkg -s vin-inspect-torch >/dev/null"
  grep -E "^Need to get|^After this operation" apt_torch.log | sed "s/^/  vin-inspect-torch: /"
  vin-inspect capture convnet.pt --inputs images.npz >capture.jsonl 2>capture.err
  check "capture from the packages gives the build tree'"'"'s records" cmp -s capture.jsonl expected_capture.jsonl
  echo "$passed passed, $failed failed"
  [[ $failed == 0 ]]
'
