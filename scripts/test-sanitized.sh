#!/usr/bin/env bash
# test-sanitized.sh - the CI tier with AddressSanitizer and UBSan: configure
# build-asan with -DMEMPROF_SANITIZE=ON (symbolizer, profdata and the tests
# are instrumented; the runtime never is), build, and run the whole ctest
# suite against it with leak detection on.  Extra arguments go to ctest
# (e.g. -R damaged).  After ctest's output (which ends with its summary
# line), skipped tests with their reasons and the 10 slowest tests
# (test/lib/summary.py), as scripts/test.sh prints them.  Exits with
# ctest's status.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${MEMPROF_ASAN_BUILD_DIR:-build-asan}
cmake -S . -B "$BUILD_DIR" -DMEMPROF_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j2 >/dev/null
# Sanitizer reports abort the process (-fno-sanitize-recover=all at build
# time), so a report fails the test that ran the tool.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$PWD/$BUILD_DIR ;; esac
export MEMPROF_BUILD_DIR=$BUILD_DIR
SRC_DIR=$PWD
cd "$BUILD_DIR"
rm -rf test-skips Testing/junit.xml   # reasons of this run only
status=0
ctest --output-on-failure -j2 --output-junit "$BUILD_DIR/Testing/junit.xml" "$@" || status=$?
python3 "$SRC_DIR/test/lib/summary.py" "$BUILD_DIR" Testing/junit.xml || true
exit $status
