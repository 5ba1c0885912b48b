#!/usr/bin/env bash
# Installs the Debian 12 packages that building, testing and regenerating fixtures need.
# Idempotent: packages already installed are skipped; apt-get runs only when something is missing.
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config
  # libraries (the stack)
  libtorch-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev doctest-dev libzip-dev
  # the libFuzzer targets (scripts/fuzz.sh): clang and its sanitizer and fuzzer runtimes
  clang-14 libclang-rt-14-dev
  # fixture generation and reference checks
  python3 python3-torch python3-numpy python3-pydantic python3-torchvision
  # man page rendering check
  groff-base
  # peak memory in bench/benchmark.py
  time
  # the Debian packages (cpack's dpkg-shlibdeps) and the Debian roots they and the Debian 13
  # configurations are tested in (scripts/test_packages.sh, scripts/test_in_root.sh)
  dpkg-dev mmdebstrap
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present" >&2
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
