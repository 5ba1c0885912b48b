#!/usr/bin/env bash
# Installs the Debian packages that building, testing and regenerating fixtures need, on Debian 12
# and on the newer distributions CI tests (Debian 13, Debian testing): the same names everywhere
# but the fuzzers' clang, which is the distribution's default (the `clang` package: clang 14 on
# Debian 12, 19 on Debian 13) with its sanitizer and fuzzer runtimes.
# Idempotent: packages already installed are skipped; apt-get runs only when something is missing.
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config
  # libraries (the stack)
  libtorch-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev doctest-dev libzip-dev
  libdeflate-dev
  # the libFuzzer targets (scripts/fuzz.sh): the distribution's clang (its runtimes below)
  clang
  # fixture generation and reference checks
  python3 python3-torch python3-numpy python3-pydantic python3-torchvision
  # man page rendering check; GitHub's Markdown parser for diff --format markdown's tests
  groff-base cmark-gfm
  # peak memory in bench/benchmark.py
  time
  # the report pages' tests in a real browser (tests/report: headless, over its DevTools pipe)
  chromium
  # the Debian packages (cpack's dpkg-shlibdeps) and the Debian roots they and the Debian 13
  # configurations are tested in (scripts/test_packages.sh, scripts/test_in_root.sh)
  dpkg-dev mmdebstrap
)

missing_of() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
updated=0
install() {
  if ((updated == 0)); then
    $SUDO apt-get update -q
    updated=1
  fi
  $SUDO apt-get install -y -q --no-install-recommends "$@"
}

mapfile -t missing < <(missing_of "${PACKAGES[@]}")
if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}" >&2
  install "${missing[@]}"
fi
# the sanitizer and fuzzer runtimes of the clang the `clang` package chose (clang-N)
clang_version=$(dpkg-query -W -f='${Depends}' clang | grep -o 'clang-[0-9]*' | head -1 | cut -d- -f2)
mapfile -t missing < <(missing_of "libclang-rt-$clang_version-dev")
if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}" >&2
  install "${missing[@]}"
fi
if ((updated == 0)); then echo "setup: all $((${#PACKAGES[@]} + 1)) packages present" >&2; fi
