#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and tests three configurations, each built with the CI preset
# (warnings are errors) and tested through CTest on fixtures its own torch writes:
#
#   configuration   where                   LibTorch  compiler  C++  suites
#   Debian 12       this machine            1.13      GCC 12    17   all but the zoo; then the
#                                                                    same sources without LibTorch
#                                                                    (preset notorch)
#   Debian 13       a root (test_in_root)   2.6       GCC 14    17   all but the zoo
#   Debian testing  a root (test_in_root)   2.14      GCC 16    20   all, the zoo included
#
# The zoo (every torchvision model and torch.nn's recurrent and transformer modules against
# Python: about half of a configuration's time) runs on the newest LibTorch only, which keeps the
# run within its budget (45 minutes on a clean 2-core machine; docs/testing.md). Then:
#   - scripts/test_packages.sh: the Debian packages made from build/ci, installed with apt-get
#     in a clean Debian 12 root, run there (beside the Debian 13 build: it waits on the disk);
#   - scripts/test_cross_version.sh: each build on the archives the other two versions' torch
#     wrote;
#   - scripts/fuzz.sh: every libFuzzer target (built with clang right after the Debian 12 build,
#     so that what clang refuses fails the run early) for 30 seconds (FUZZ_SECONDS=N sets it, 0 skips
#     them): a smoke run of each on its seeds and regressions within the budget; longer runs are
#     scripts/fuzz.sh SECONDS on their own.
# The Debian roots need root (CI runs as root); VIN_ROOTS=0 leaves out the packages, the two roots'
# configurations and the cross-version checks on a machine where that is not possible (the zoo
# then runs here). The roots are made (once; they are kept in /var/cache/vin-inspect) in the
# background while the Debian 12 suite runs: mmdebstrap mostly waits on the network and the disk.
#
# At the end (passed or not) it prints a table of its steps with their wall times
# (scripts/steps.sh); docs/testing.md has the budget.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh
steps_begin

# Where page faults are slow (virtual machines such as CI's: about 15 us each, on this project's
# machine), the suite spends a third of its CPU time in the kernel faulting memory in. glibc's
# malloc is told to ask for transparent huge pages for the memory it maps (tensors of the zoo's
# models: GBs; 2.5 GB faulted in 0.8 s instead of 6.8 s), to keep blocks up to 32 MiB in its heap
# and not to hand freed heap memory back to the kernel only to fault it in again (a LibTorch
# process: 6,500 faults instead of 30,000). No result changes; the processes are short-lived.
export GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=67108864}

# ccache (scripts/setup.sh installs it; CMakeLists.txt uses it where found) hits from one clone to
# the next: paths under the work tree are hashed relative to it, and the build folder's own path
# is left out of the hash. The ci and notorch builds carry no debug information; the fuzz
# build's may then name the folder of the clone that compiled an object first, which only shows
# in the paths of a fuzz crash report's stack.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}

step "set-up (scripts/setup.sh)" bash scripts/setup.sh
roots_pid=""
if [[ ${VIN_ROOTS:-1} != 0 ]]; then
  mkdir -p build
  nice -n 10 bash scripts/prepare_roots.sh >build/prepare_roots.log 2>&1 &
  roots_pid=$!
fi

# which suites run where: the zoo on the newest LibTorch only (without the roots, here)
zoo_here=(-LE zoo)
if [[ ${VIN_ROOTS:-1} == 0 ]]; then zoo_here=(); fi

step "Debian 12: build (ci)" bash -c 'cmake --preset ci >/dev/null && cmake --build --preset ci'
# the fuzz targets' clang build right after GCC's: clang refuses some C++ that GCC accepts (twice
# a lambda capturing a structured binding, C++17), and a run learns that in minutes, not at its
# end; scripts/fuzz.sh then finds the targets built
if ((${FUZZ_SECONDS:-30} > 0)); then
  step "fuzz: build (clang, ASan + UBSan)" bash -c 'cmake --preset fuzz >/dev/null && cmake --build --preset fuzz'
fi
rm -f build/ci/zoo_times.txt
# the set-up installed chromium: here a report test without a browser fails rather than skips
ctest_step "Debian 12: CTest (ci${zoo_here:+, without the zoo})" env VIN_REQUIRE_BROWSER=1 ctest --preset ci --parallel 2 "${zoo_here[@]}"
zoo_step_note build/ci/zoo_times.txt
# the same sources without LibTorch: vin_core and the binary alone (capture says it is missing)
step "Debian 12: build (notorch)" bash -c 'cmake --preset notorch >/dev/null && cmake --build --preset notorch'
ctest_step "Debian 12: CTest (notorch)" env VIN_REQUIRE_BROWSER=1 ctest --preset notorch --parallel 2
if [[ -n $roots_pid ]]; then
  waited=$EPOCHREALTIME
  if ! wait "$roots_pid"; then
    cat build/prepare_roots.log >&2
    echo "$0: making the Debian roots failed (above)" >&2
    exit 1
  fi
  step_note "waiting for the Debian roots" "$(_steps_since "$waited")"
  # the packages check mostly waits on the disk and on dpkg: it runs beside the Debian 13 build,
  # its output kept until the Debian 13 steps are done (at exit, it is waited for either way)
  bash scripts/test_packages.sh build/ci >build/test_packages.log 2>&1 &
  packages_pid=$!
  steps_at_exit 'if [[ -n ${packages_pid:-} ]]; then wait "$packages_pid"; fi'
  bash scripts/test_in_root.sh debian13 -LE zoo
  packages_status=0
  wait "$packages_pid" || packages_status=$?
  packages_pid=""
  cat build/test_packages.log
  if ((packages_status != 0)); then
    echo "$0: the packages check failed (above)" >&2
    exit "$packages_status"
  fi
  bash scripts/test_in_root.sh testing
  bash scripts/test_cross_version.sh
fi
if ((${FUZZ_SECONDS:-30} > 0)); then
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
fi
