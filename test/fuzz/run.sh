#!/bin/sh
# run.sh - run one libFuzzer target (or all) on the checked-in corpus.
#
#   test/fuzz/run.sh TARGET|all [SECONDS] [libFuzzer args...]
#
# TARGET is raw, indexed, yaml, elf, options, instrprof, timeline or roots.
# The fuzzers come from $MEMPROF_BUILD_DIR (default build-fuzz, configured
# with -DMEMPROF_FUZZ=ON -DCMAKE_C_COMPILER=clang-22).  New inputs go to
# $MEMPROF_BUILD_DIR/test/fuzz/work/TARGET (the checked-in corpus is only
# read); crashes to .../artifacts/TARGET/.  Exit status is non-zero when the
# fuzzer found a crash, a leak, a timeout or an out-of-memory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${MEMPROF_BUILD_DIR:-$here/../../build-fuzz}
target=${1:?usage: run.sh TARGET|all [SECONDS] [libFuzzer args...]}
secs=${2:-60}
[ $# -ge 2 ] && shift 2 || shift $#

if [ "$target" = all ]; then
  for t in raw indexed yaml elf options instrprof timeline roots; do "$0" "$t" "$secs" "$@"; done
  exit 0
fi

fuzzer=$build/test/fuzz/fuzz_$target
[ -x "$fuzzer" ] || { echo "run.sh: $fuzzer not built (MEMPROF_FUZZ=ON?)" >&2; exit 2; }
work=$build/test/fuzz/work/$target
art=$build/test/fuzz/artifacts/$target/
mkdir -p "$work" "$art"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$fuzzer" "$work" "$here/corpus/$target" \
  -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 \
  -max_len=16384 -print_final_stats=1 -artifact_prefix="$art" "$@"
