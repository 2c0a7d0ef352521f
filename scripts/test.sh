#!/usr/bin/env bash
# test.sh - the whole test suite: install what is missing, build, run ctest.
# Ends with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${MEMPROF_BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" >/dev/null   # pick up newly added tests
cmake --build "$BUILD_DIR" -j"$(nproc)" >/dev/null
cd "$BUILD_DIR"
exec ctest --output-on-failure -j2 "$@"
