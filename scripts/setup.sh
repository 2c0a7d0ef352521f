#!/usr/bin/env bash
# setup.sh - install what the project needs from Debian's packages (only what
# is missing), then configure and build into ./build.
#
#   scripts/setup.sh            install + build
#   scripts/setup.sh --no-build install only
#
# Quick and quiet when everything is already there.  Installing needs root
# (or sudo); building does not.
set -euo pipefail
cd "$(dirname "$0")/.."

# llvm-{22,19}-dev: the schema test compares include/MIBDef.inc with the
# MIBEntryDef.inc and MemProfData.inc they install.  git, xz-utils, zstd:
# real programs test/programs/ runs with the runtime preloaded.
# libgmock-dev: bench/'s leveldb db_bench includes the gmock and gtest
# headers.
# llvm-22-tools: lit, FileCheck, not, count and split-file for LLVM's MemProf
# lit tests (test/lit).
# libjemalloc-dev: libmemprof-hotcold is built on its libjemalloc_pic.a.
# libcapstone-dev: `memprof-profdata check` disassembles with it (optional:
# without it check is not built and its tests skip).
# (clang-22's LTO, used by the demo's hot/cold step, needs ld.gold from
# binutils and LLVMgold.so from llvm-22-linker-tools, a clang-22 dependency.)
# The report's consumers, for its tests: golang-go (go tool pprof),
# chromium (renders the HTML report headless), valgrind (dh_view.js for
# DHAT's JSON), python3-jsonschema (speedscope's schema, from npm below).
# python3-distributed: Dask, which scripts/dask-tree-merge.py runs the
# merge tree on (docs/merge-at-scale.md; test/profdata/test_merge_dask.py).
PACKAGES=(
  cmake make gcc pkg-config python3 binutils
  llvm-22-tools
  clang-22 llvm-22 llvm-22-dev libclang-rt-22-dev
  clang-19 llvm-19 llvm-19-dev libclang-rt-19-dev
  libdw-dev libelf-dev libyaml-dev zlib1g-dev libzstd-dev liblzma-dev libbz2-dev
  dwz debuginfod libdebuginfod1
  git xz-utils zstd
  libgmock-dev
  libjemalloc-dev libcapstone-dev
  golang-go chromium valgrind python3-jsonschema
  python3-distributed
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# npm from Debian unless some npm (e.g. a nodejs that bundles it) is there.
command -v npm >/dev/null || missing+=(nodejs npm)

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then SUDO=sudo; else
      echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# speedscope's file-format schema, for the report's speedscope test (which
# is skipped, visibly, when this could not be installed).
SPEEDSCOPE=speedscope@1.25.0
if command -v npm >/dev/null &&
   [ ! -f "$(npm root -g)/speedscope/dist/release/file-format-schema.json" ]; then
  echo "setup: npm install -g $SPEEDSCOPE"
  as_root=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && as_root=sudo
  $as_root npm install -g --no-audit --no-fund "$SPEEDSCOPE" >/dev/null 2>&1 ||
    echo "setup: warning: could not install $SPEEDSCOPE from npm" >&2
fi

[ "${1:-}" = "--no-build" ] && exit 0

BUILD_DIR=${MEMPROF_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$BUILD_DIR" -j"$(nproc)" >/dev/null || {
  echo "setup: build failed; rerun 'cmake --build $BUILD_DIR' for details" >&2
  exit 1
}
echo "setup: built into $BUILD_DIR"
