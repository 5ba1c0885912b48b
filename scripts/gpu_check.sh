#!/usr/bin/env bash
# vin-inspect on a GPU machine: builds it against the LibTorch of a pip-installed CUDA PyTorch and
# checks capture, --stats, --save, compare and profile on the GPU against PyTorch and the CPU
# (tests/gpu/gpu_checks.py: resnet18, a transformer encoder, an LSTM tagger), then measures the
# instrumented forward's overhead there. The GPU machine needs no network and no apt: the other
# dependencies travel as Debian 12 .deb files, unpacked with dpkg -x into a prefix.
#
#   scripts/gpu_check.sh fetch   here (Debian 12, apt): downloads those .deb files into .gpu-deps/
#                                (ignored by git), to copy to the GPU machine with the tree
#   scripts/gpu_check.sh [run]   there: unpacks .gpu-deps/*.deb into .gpu-deps/prefix, builds into
#                                build/gpu (release, benchmarks on, tests off) with CMake, a
#                                compiler of the C++ standard that torch's CMake package asks for
#                                (CMakeLists.txt follows it: C++20 for the newest torch) and the
#                                Torch CMake package of $PYTHON's torch, then runs
#                                the checks; prints `N passed, M failed` (exit 0 only when all pass)
#
# Environment: PYTHON (default python3: the one with the CUDA torch), VIN_GPU_DEVICE (default
# cuda; cpu runs the same checks on the CPU, which is how they are tried without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
DEPS=.gpu-deps
PYTHON=${PYTHON:-python3}
DEVICE=${VIN_GPU_DEVICE:-cuda}
# the build dependencies and what they link at run time; pkgconf in case the machine has no
# pkg-config (CMake finds libzip through it)
PACKAGES="libcli11-dev libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libspdlog-dev
  libspdlog1.10 libfmt-dev libfmt9 libzip-dev libzip4 zlib1g-dev
  libdeflate-dev libdeflate0 pkgconf pkgconf-bin
  libpkgconf3"

if [[ ${1:-run} == fetch ]]; then
  mkdir -p "$DEPS"
  (cd "$DEPS" && rm -f ./*.deb && apt-get download $PACKAGES)
  echo "$0: $(ls "$DEPS"/*.deb | wc -l) packages in $DEPS ($(du -sh "$DEPS" | cut -f1))" >&2
  exit 0
fi
[[ ${1:-run} == run ]] || { echo "usage: $0 [fetch|run]" >&2; exit 2; }

if ! ls "$DEPS"/*.deb >/dev/null 2>&1; then
  echo "$0: no .deb files in $DEPS: run '$0 fetch' on a Debian 12 machine first" >&2
  exit 1
fi
prefix=$PWD/$DEPS/prefix
rm -rf "$prefix"
for deb in "$DEPS"/*.deb; do dpkg -x "$deb" "$prefix"; done
multiarch=$(ls -d "$prefix"/usr/lib/*-linux-gnu | head -1)
export LD_LIBRARY_PATH=$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PKG_CONFIG_SYSROOT_DIR=$prefix
export PKG_CONFIG_LIBDIR=$multiarch/pkgconfig:$prefix/usr/share/pkgconfig
pkg_config=$(command -v pkg-config || echo "$prefix/usr/bin/pkgconf")

read -r torch_version torch_cmake cxx11_abi cuda < <("$PYTHON" -c '
import torch
print(torch.__version__, torch.utils.cmake_prefix_path, int(torch.compiled_with_cxx11_abi()),
      torch.cuda.is_available())')
echo "$0: torch $torch_version (CUDA available: $cuda), CMake package in $torch_cmake" >&2
if [[ $cxx11_abi != 1 ]]; then
  echo "$0: torch $torch_version was built with the pre-C++11 ABI; vin-inspect links libraries" \
    "built with the C++11 one: use PyTorch 2.7 or newer (its wheels use the C++11 ABI)" >&2
  exit 1
fi

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build/gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DVIN_BUILD_TESTS=OFF \
  -DVIN_BUILD_BENCHMARKS=ON -DCMAKE_PREFIX_PATH="$torch_cmake;$prefix/usr;$multiarch/cmake" \
  -DPKG_CONFIG_EXECUTABLE="$pkg_config" -DVIN_PYTHON="$(command -v "$PYTHON")"
cmake --build build/gpu --parallel "$(nproc)"
"$PYTHON" tests/gpu/gpu_checks.py --binary build/gpu/apps/vin-inspect \
  --bench build/gpu/bench/vin-capture-bench --plain build/gpu/bench/vin-plain-forward \
  --device "$DEVICE" --work build/gpu/checks
