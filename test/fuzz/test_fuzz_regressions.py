"""test_fuzz_regressions.py - inputs the fuzzers (or reviews) found to crash
or trip a sanitizer, replayed through memprof-profdata `show` and `merge`
on every build.  Each must end in exit 0 or 1 (never a signal), without a
sanitizer report, and a refusal must name the file; an accepted input's
`show --symbolized` output must be readable by `show`.  The UBSan findings
only fail in the sanitized tier (scripts/test-sanitized.sh); runtime option
strings (regressions/options/) are replayed by the fuzz build only
(fuzz.options.regressions).
"""
import os
import subprocess
import sys
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
REGRESSIONS = os.path.join(HERE, "regressions")


class FuzzRegressionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = harness.Scratch("fuzzreg")
        harness.run([sys.executable, os.path.join(HERE, "seedprog.py"), "build",
                     cls.scratch.path("bin")])
        cls.bins = [f"--profiled-binary={cls.scratch.path('bin', b)}"
                    for b in ("seedprog22", "seedprog19", "seedprog22h")]
        cls.tool = harness.profdata_tool()

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def test_replay(self):
        n = 0
        for kind in ("raw", "indexed", "yaml"):
            d = os.path.join(REGRESSIONS, kind)
            for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                path = os.path.join(d, name)
                for cmd in ("show", "merge"):
                    n += 1
                    with self.subTest(input=f"{kind}/{name}", cmd=cmd):
                        out = self.scratch.path("out")
                        try:
                            r = subprocess.run(
                                [self.tool, cmd, path, *self.bins, "-o", out],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                timeout=60)
                        except subprocess.TimeoutExpired:
                            self.fail("no exit in 60 s")
                        err = r.stderr.decode(errors="replace")
                        self.assertGreaterEqual(r.returncode, 0, err)
                        self.assertNotIn("runtime error:", err)
                        self.assertNotIn("Sanitizer", err)
                        self.assertIn(r.returncode, (0, 1), err)
                        if r.returncode:
                            self.assertIn(f"error: {path}: ", err)
                        elif cmd == "show":
                            self.check_symbolized_yaml_reads_back(path)
        self.assertGreater(n, 0)

    def check_symbolized_yaml_reads_back(self, path):
        """What `show --symbolized` writes, `show` must read."""
        y = self.scratch.path("sym.yaml")
        r = subprocess.run([self.tool, "show", "--symbolized", path, *self.bins,
                            "-o", y], stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        r = subprocess.run([self.tool, "show", y, "-o", self.scratch.path("again")],
                           stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(r.returncode, 0, "our own YAML refused: " +
                         r.stderr.decode(errors="replace"))


if __name__ == "__main__":
    harness.main()
