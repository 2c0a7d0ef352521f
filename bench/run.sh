#!/bin/sh
# bench/run.sh [--quick] [--only runtime|tool|pgo] [--reps N] [--sizes 1,10,50,200]
# Builds what it needs (Debian sources, the three link variants, our runtime
# and tool in $BENCH_DIR/tree unless MEMPROF_BUILD_DIR is given) and prints
# our figures beside LLVM's. See bench/README.md. Not part of CI.
set -e
command -v clang-22 >/dev/null && command -v llvm-profdata-22 >/dev/null || {
    echo "bench: clang-22 and llvm-profdata-22 are required" >&2; exit 1; }
exec python3 "$(dirname "$0")/bench.py" "$@"
