# Debian roots made with mmdebstrap, for the other CI configurations (scripts/test_in_root.sh) and
# the package check (scripts/test_packages.sh). Sourced, not run. Needs root (CI runs as root).
#
#   make_root SUITE DIR "PKG PKG ..."   make DIR once: a SUITE root with those packages; kept while
#                                       the suite and package list stay the same (DIR/.vin-root)
#   in_root DIR COMMAND...              run COMMAND in DIR (chroot) with /proc, /dev and /sys
#                                       mounted in a private mount namespace, so nothing stays
#                                       mounted when it ends, whatever way it ends
#   root_tarball SUITE FILE "PKG ..."   a pristine root as a tarball made once (for throwaway roots)
#   root_config NAME                    sets ROOT_SUITE, ROOT_DIR and ROOT_LABEL for a
#                                       configuration's root (the table below)
#
# The roots scripts/test.sh uses, named once here (scripts/prepare_roots.sh makes them all, in
# the background while the Debian 12 suite runs; the scripts that use them make them if missing):

VIN_ROOT_MIRROR=${VIN_ROOT_MIRROR:-http://deb.debian.org/debian}
VIN_ROOT_CACHE=${VIN_ROOT_CACHE:-/var/cache/vin-inspect}
# what a configuration's root holds: the toolchain, the stack, and Python with torch for the
# fixtures and references (the same list for every suite)
ROOT_PACKAGES="g++ cmake ninja-build ccache pkg-config git \
  libtorch-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev doctest-dev libzip-dev \
  libdeflate-dev \
  python3 python3-torch python3-numpy python3-pydantic python3-torchvision groff-base time"
# The configurations built and tested in a root (scripts/test_in_root.sh NAME):
#   NAME      suite    what it brings
#   debian13  trixie   LibTorch 2.6, torchvision 0.21, GCC 14, libzip 1.11, CLI11 2.4, Python 3.13
#   testing   testing  LibTorch 2.14, torchvision 0.27, GCC 16, libzip 1.12, CLI11 2.6, yaml-cpp 0.9,
#                      Python 3.14 (Debian testing: the newest LibTorch Debian carries)
ROOT_NAMES="debian13 testing"
root_config() {
  case $1 in
    debian13) ROOT_SUITE=trixie ROOT_LABEL="Debian 13" ;;
    testing) ROOT_SUITE=testing ROOT_LABEL="Debian testing" ;;
    *)
      echo "$0: no root configuration named '$1' (known: $ROOT_NAMES)" >&2
      return 2
      ;;
  esac
  ROOT_DIR=$VIN_ROOT_CACHE/$1
}
# the clean Debian 12 the packages are installed in (scripts/test_packages.sh)
DEBIAN12_TARBALL=${VIN_DEBIAN12_TARBALL:-$VIN_ROOT_CACHE/debian12-clean.tar}

# No recommended packages. A mirror that serves a snapshot (as CI's does) keeps testing's Release
# file past its Valid-Until date (a week after it was made), which apt then refuses as expired;
# the signature is still checked.
MMDEBSTRAP_OPTIONS=(--aptopt='APT::Install-Recommends "false"'
  --aptopt='Acquire::Check-Valid-Until "false"')

need_root_user() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "$0: making and entering Debian roots needs root (sudo $0)" >&2
    exit 1
  fi
}

# the words that say which root DIR is: a changed package list makes a new root
root_stamp() { printf '%s\n%s\n' "$1" "$(tr ' ' '\n' <<<"$2" | sort -u | xargs)"; }

# a root an interrupted mmdebstrap left: it may still have /proc, /sys and /dev mounted in it,
# which rm must not walk into
remove_unfinished_root() {
  [[ -e $1 ]] || return 0
  # none mounted is the common case (grep then fails, which pipefail would make fatal)
  { findmnt --list --noheadings --output TARGET | grep -F "$1/" || true; } | sort -r |
    xargs -r -n1 umount -l
  rm -rf --one-file-system "$1"
}

make_root() {
  local suite=$1 dir=$2 packages=$3
  need_root_user
  if [[ -f $dir/.vin-root && $(cat "$dir/.vin-root") == "$(root_stamp "$suite" "$packages")" ]]; then
    echo "$0: using the $suite root $dir" >&2
    return
  fi
  echo "$0: making a $suite root in $dir (once; a few minutes)" >&2
  remove_unfinished_root "$dir.new"
  mkdir -p "$(dirname "$dir")"
  mmdebstrap --quiet --variant=apt "${MMDEBSTRAP_OPTIONS[@]}" \
    --include="${packages// /,}" "$suite" "$dir.new" "$VIN_ROOT_MIRROR"
  root_stamp "$suite" "$packages" >"$dir.new/.vin-root"
  rm -rf --one-file-system "$dir"
  mv "$dir.new" "$dir"
}

root_tarball() {
  local suite=$1 file=$2 packages=$3
  need_root_user
  if [[ -f $file && -f $file.stamp && $(cat "$file.stamp") == "$(root_stamp "$suite" "$packages")" ]]; then
    return
  fi
  echo "$0: making a pristine $suite root in $file (once)" >&2
  mkdir -p "$(dirname "$file")"
  mmdebstrap --quiet --variant=apt "${MMDEBSTRAP_OPTIONS[@]}" \
    ${packages:+--include="${packages// /,}"} "$suite" "$file.new.tar" "$VIN_ROOT_MIRROR"
  mv "$file.new.tar" "$file"
  root_stamp "$suite" "$packages" >"$file.stamp"
}

in_root() {
  local dir=$1
  shift
  need_root_user
  # a private mount namespace: the mounts vanish with it; --pid/--fork: no process outlives it
  unshare --mount --pid --fork --kill-child -- bash -euc '
    dir=$1; shift
    mount --make-rprivate /
    mount -t proc proc "$dir/proc"
    mount --rbind /dev "$dir/dev"
    mount --rbind /sys "$dir/sys"
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    exec chroot "$dir" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
      ${GLIBC_TUNABLES:+GLIBC_TUNABLES=$GLIBC_TUNABLES} \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
  ' in_root "$dir" "$@"
}
