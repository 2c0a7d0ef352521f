#!/usr/bin/env python3
"""run.py - run LLVM's compiler-rt MemProf lit tests against one runtime.

  run.py RUNTIME [TEST]      RUNTIME: llvm, ours-static or ours-shared

With no TEST, all tests run with lit's usual report (one line per test and
a summary).  With TEST (a file name in the suite), that test alone runs in
its own folder, lit shows its commands and output, and the exit status
tells ctest the result: 0 passed, 77 skipped (UNSUPPORTED, or an expected
failure: XFAIL), anything else failed; a skipped test writes its reason to
$MEMPROF_BUILD_DIR/test-skips/lit.RUNTIME.TEST.txt, which scripts/test.sh
prints after ctest's summary.

The suite is ../shared/llvm-memprof-lit/TestCases beside the repository
(MEMPROF_LIT_SUITE overrides); the build is $MEMPROF_BUILD_DIR (default
build/).  lit and FileCheck come from Debian's llvm-22-tools."""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LLVM_BIN = "/usr/lib/llvm-22/bin"
SKIP = 77


def build_dir():
    return os.path.abspath(os.environ.get("MEMPROF_BUILD_DIR") or os.path.join(REPO, "build"))


def skipped(runtime, test, reason):
    """Records why `test` skipped (see the module's doc); returns SKIP."""
    if test is not None:
        folder = os.path.join(build_dir(), "test-skips")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"lit.{runtime}.{test}.txt"), "w") as f:
            f.write(" ".join(reason.split()) + "\n")
    return SKIP


def skip_reason(entry):
    """Why lit did not count `entry` (a test of its JSON report) as run:
    the expectation's note for an XFAIL, lit's own line for UNSUPPORTED."""
    out = entry.get("output") or ""
    if entry["code"] == "XFAIL":
        m = re.search(r"^expected with .*$", out, re.M)
        return "XFAIL: " + (m.group(0) if m else "expected to fail")
    lines = [l for l in out.splitlines() if l.strip()]
    return "UNSUPPORTED: " + (lines[0] if lines else "lit marks it unsupported here")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    runtime = sys.argv[1]
    test = sys.argv[2] if len(sys.argv) == 3 else None
    suite = os.environ.get("MEMPROF_LIT_SUITE") or os.path.join(
        REPO, "..", "shared", "llvm-memprof-lit", "TestCases")
    if not os.path.isdir(suite):
        why = f"LLVM's MemProf lit tests are not at {os.path.abspath(suite)}"
        print(f"SKIPPED: {why}")
        return skipped(runtime, test, why)
    lit = os.path.join(LLVM_BIN, "lit")
    if not os.path.exists(lit):
        print(f"{lit} is missing: install llvm-22-tools (scripts/setup.sh)")
        return 1
    build = build_dir()
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
                entries = [t for t in json.load(f)["tests"] if t["name"] == name]
        except (OSError, ValueError):
            entries = []
    if len(entries) != 1:
        print(f"lit did not run {name}")
        return 1
    code = entries[0]["code"]
    if code == "PASS":
        return 0
    if code in ("UNSUPPORTED", "XFAIL"):
        return skipped(runtime, test, skip_reason(entries[0]))
    return 1


if __name__ == "__main__":
    sys.exit(main())
