#!/usr/bin/env bash
# test.sh - the whole test suite: install what is missing, build, run ctest.
# After ctest's output (which ends with its summary line): every skipped
# test with its reason, and the 10 slowest tests with their time limit
# (test/lib/summary.py).  Exits with ctest's status.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${MEMPROF_BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" >/dev/null   # pick up newly added tests
cmake --build "$BUILD_DIR" -j"$(nproc)" >/dev/null
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$PWD/$BUILD_DIR ;; esac
SRC_DIR=$PWD
cd "$BUILD_DIR"
rm -rf test-skips Testing/junit.xml   # reasons of this run only
status=0
ctest --output-on-failure -j2 --output-junit "$BUILD_DIR/Testing/junit.xml" "$@" || status=$?
python3 "$SRC_DIR/test/lib/summary.py" "$BUILD_DIR" Testing/junit.xml || true
exit $status
