#!/usr/bin/env python3
"""run.py - run LLVM's compiler-rt MemProf lit tests against one runtime.

  run.py RUNTIME [TEST]      RUNTIME: llvm, ours-static or ours-shared

With no TEST, all tests run with lit's usual report (one line per test and
a summary).  With TEST (a file name in the suite), that test alone runs in
its own folder, lit shows its commands and output, and the exit status
tells ctest the result: 0 passed, 77 skipped (UNSUPPORTED, or an expected
failure: XFAIL), anything else failed.

The suite is ../shared/llvm-memprof-lit/TestCases beside the repository
(MEMPROF_LIT_SUITE overrides); the build is $MEMPROF_BUILD_DIR (default
build/).  lit and FileCheck come from Debian's llvm-22-tools."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LLVM_BIN = "/usr/lib/llvm-22/bin"
SKIP = 77


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    runtime = sys.argv[1]
    test = sys.argv[2] if len(sys.argv) == 3 else None
    suite = os.environ.get("MEMPROF_LIT_SUITE") or os.path.join(
        REPO, "..", "shared", "llvm-memprof-lit", "TestCases")
    if not os.path.isdir(suite):
        print(f"SKIPPED: LLVM's MemProf lit tests are not at {os.path.abspath(suite)}")
        return SKIP
    lit = os.path.join(LLVM_BIN, "lit")
    if not os.path.exists(lit):
        print(f"{lit} is missing: install llvm-22-tools (scripts/setup.sh)")
        return 1
    build = os.path.abspath(os.environ.get("MEMPROF_BUILD_DIR") or os.path.join(REPO, "build"))
    exec_root = os.path.join(build, "test", "lit", runtime)
    cmd = [sys.executable, lit, HERE, "--param", "memprof_runtime=" + runtime,
           "--param", "build_dir=" + build, "--param", "suite_dir=" + suite]
    if test is None:
        return subprocess.call(cmd + ["-v", "--param", "exec_root=" + exec_root])

    name = f"MemProfiler-{runtime} :: {test}"
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "lit.json")
        subprocess.call(cmd + ["-a", "-j1", "--param",
                               "exec_root=" + os.path.join(exec_root, test),
                               "--filter", "^" + name.replace(".", r"\.") + "$",
                               "-o", report])
        try:
            with open(report) as f:
                codes = [t["code"] for t in json.load(f)["tests"] if t["name"] == name]
        except (OSError, ValueError):
            codes = []
    if len(codes) != 1:
        print(f"lit did not run {name}")
        return 1
    if codes[0] == "PASS":
        return 0
    return SKIP if codes[0] in ("UNSUPPORTED", "XFAIL") else 1


if __name__ == "__main__":
    sys.exit(main())
