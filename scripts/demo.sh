#!/usr/bin/env bash
# demo.sh - the main job end to end on the bundled example:
#   install what is missing and build, instrument examples/hotcold, run it
#   with our runtime, merge the raw profile, report on it, rebuild the program
#   with the profile so clang marks its allocations hot or cold, then build
#   it so those marks become operator new(..., __hot_cold_t) calls served by
#   libmemprof-hotcold, run it with the library's statistics, and check
#   which hints landed in the binary.
# MEMPROF_BUILD_DIR (relative to the top of the tree, or absolute) is the
# build to use; MEMPROF_DEMO_OUT the folder for the demo's files (out/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${MEMPROF_BUILD_DIR:-build}
ROOT=$PWD
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
LIB=$BUILD_DIR/runtime/libmemprof.a
HOTCOLD=$BUILD_DIR/hotcold/libmemprof-hotcold.a
TOOL=$BUILD_DIR/profdata/memprof-profdata
SRC=$ROOT/examples/hotcold/hotcold.cc
OUT=${MEMPROF_DEMO_OUT:-$ROOT/out/demo}
rm -rf "$OUT" && mkdir -p "$OUT" && cd "$OUT"

step() { printf '\n== %s\n$ %s\n' "$1" "$2"; eval "$2"; }

step "1. instrument (clang++-22 -fmemory-profile) and link our runtime" \
  "clang++-22 -O1 -g -fmemory-profile -fno-omit-frame-pointer -fno-optimize-sibling-calls -c $SRC -o hotcold.o && clang++-22 hotcold.o -o hotcold -Wl,--whole-archive $LIB -Wl,--no-whole-archive -lpthread -ldl -lm"
step "2. run it: writes memprof.profraw.<pid> (and, with timeline=1, its .timeline: live bytes over time)" \
  "MEMPROF_OPTIONS=timeline=1 ./hotcold && ls memprof.profraw.*"
step "3. merge: symbolize with libdw, write the indexed profile clang reads" \
  "$TOOL merge memprof.profraw.* --profiled-binary=hotcold -o hotcold.memprofdata"
step "4. report: where the memory goes, and the verdicts clang will give (same thresholds as step 5)" \
  "$TOOL report memprof.profraw.* --profiled-binary=hotcold --memprof-ave-lifetime-cold-threshold=1"
step "5. rebuild with the profile; clang marks the allocation contexts" \
  "clang++-22 -O2 -gmlt -fdebug-info-for-profiling -fmemory-profile-use=hotcold.memprofdata -mllvm -memprof-ave-lifetime-cold-threshold=1 -S -emit-llvm $SRC -o hotcold.ll && grep -oE '\"memprof\"=\"[a-z]+\"|!\"(cold|notcold|hot)\"' hotcold.ll | sort | uniq -c"
step "6. build the optimized program" \
  "clang++-22 -O2 -gmlt -fdebug-info-for-profiling -fmemory-profile-use=hotcold.memprofdata -mllvm -memprof-ave-lifetime-cold-threshold=1 $SRC -o hotcold.opt && ./hotcold.opt"
# make_buffer serves both paths, so its one call is "ambiguous" until LTO's
# context disambiguation clones it per path; the hints then become
# __hot_cold_t arguments (1 cold, 128 not cold) that libmemprof-hotcold reads.
step "7. build it with hot/cold operator new (LTO clones make_buffer per path) and libmemprof-hotcold" \
  "clang++-22 -O2 -flto -gmlt -fdebug-info-for-profiling -fmemory-profile-use=hotcold.memprofdata -mllvm -memprof-ave-lifetime-cold-threshold=1 -c $SRC -o hotcold.lto.o && clang++-22 -O2 -flto -fuse-ld=gold hotcold.lto.o -o hotcold.hc -Wl,-plugin-opt=-enable-memprof-context-disambiguation -Wl,-plugin-opt=-supports-hot-cold-new -Wl,-plugin-opt=-optimize-hot-cold-new -Wl,-plugin-opt=-optimize-existing-hot-cold-new -Wl,--whole-archive $HOTCOLD -Wl,--no-whole-archive -lpthread -ldl -lm"
step "8. run it: the cold buffer came from the cold arena, the 1000 hot ones did not" \
  "MEMPROF_HOTCOLD_OPTIONS=stats=1 ./hotcold.hc 2>&1"
# check needs capstone (libcapstone-dev, which setup.sh installs).
if "$TOOL" check --help | grep -q "not available"; then
  echo; echo "== 9. check: skipped (memprof-profdata built without capstone)"
else
  step "9. check: which hints landed in step 7's binary (each context, its hint, why not)" \
    "$TOOL check hotcold.memprofdata hotcold.hc --memprof-ave-lifetime-cold-threshold=1"
fi
echo
echo "demo: done; files in $OUT"
