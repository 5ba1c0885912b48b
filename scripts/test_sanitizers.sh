#!/usr/bin/env bash
# Builds the project with AddressSanitizer + UndefinedBehaviorSanitizer (preset asan) and runs
# the whole test suite under them. LibTorch's own leaks are suppressed (scripts/lsan.supp); a
# report from the project's code fails the run: UBSan halts, and ASan/LSan output on stderr
# breaks the CLI tests, which demand a clean one-line stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset asan
cmake --build --preset asan
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87"
ctest --preset asan --parallel 2 "$@"
