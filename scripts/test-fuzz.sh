#!/usr/bin/env bash
# test-fuzz.sh - the libFuzzer tier: build the fuzz targets with clang-22
# (-DMEMPROF_FUZZ=ON, ASan + UBSan + coverage) into build-fuzz and give each a
# short run from its seed corpus (MEMPROF_FUZZ_TIME seconds, default 30),
# plus the replay of every past finding.  test/fuzz/README.md has the long run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${MEMPROF_FUZZ_BUILD_DIR:-build-fuzz}
cmake -S . -B "$BUILD_DIR" -DCMAKE_C_COMPILER=clang-22 -DMEMPROF_FUZZ=ON \
  -DMEMPROF_FUZZ_TIME="${MEMPROF_FUZZ_TIME:-30}" >/dev/null
cmake --build "$BUILD_DIR" -j2 >/dev/null
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$PWD/$BUILD_DIR ;; esac
export MEMPROF_BUILD_DIR=$BUILD_DIR
cd "$BUILD_DIR"
exec ctest --output-on-failure -j2 -R '^fuzz\.' "$@"
