"""What heaptrack's users look for, on the profile of a program
libmemprof.so was preloaded into (no -fmemory-profile, no
--profiled-binary), end to end: the peak and what was live then, the leaks
at exit, the flame graph's folded stacks, and the diff of two runs.

progs/preloaded.c with argument k: k blocks of 4 MiB (alloc_a) and one of
2 MiB (alloc_b) live together, then freed; 1 MiB (alloc_leak) never
freed; printf's 4 KiB stdout buffer lives to the end too."""
import html
import json
import os
import re
import shutil
import unittest

import harness
import report_common as rc

SRC = os.path.join(rc.HERE, "progs", "preloaded.c")
MiB = 1 << 20


class Preloaded(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("report-preloaded")
        cls.exe = cls.shared.path("preloaded")
        harness.run(["clang-22", "-O1", "-g", SRC, "-o", cls.exe])
        cls.raw = {k: cls.run_k(k) for k in (1, 2)}

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    @classmethod
    def run_k(cls, k):
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so"),
               "MEMPROF_OPTIONS": f"log_path={cls.shared.path(f'k{k}')}:timeline=1"}
        harness.run([cls.exe, str(k)], env=env)
        (raw,) = [os.path.join(cls.shared.dir, f) for f in os.listdir(cls.shared.dir)
                  if f.startswith(f"k{k}.") and not f.endswith(".timeline")]
        return raw

    def section(self, text, title):
        """The rows of a live-heap table: [(bytes, blocks, leaf function)]."""
        body = text.split(title, 1)[1].split("\n\n", 1)[0]
        rows = re.findall(r"^\s+\d+\s+(\d+)\s+\S+%\s+(\d+)\n\s+(\S+)", body, re.M)
        return [(int(b), int(n), leaf) for b, n, leaf in rows]

    def test_peak_and_leaks(self):
        out = rc.report(self.raw[1]).stdout
        self.assertRegex(out, r"peak live heap +6\.00 MiB \(6291456\) in 2 blocks at ")
        self.assertEqual(self.section(out, "Live at the peak: "),
                         [(4 * MiB, 1, "alloc_a"), (2 * MiB, 1, "alloc_b")])
        leaks = self.section(out, "Live at exit (never freed): ")
        self.assertEqual(leaks[0], (MiB, 1, "alloc_leak"))
        self.assertEqual([row[:2] for row in leaks[1:]], [(4096, 1)])

    def test_flame_graph(self):
        out = rc.report(self.raw[2], "--format=folded").stdout
        lines = dict(ln.rsplit(" ", 1) for ln in out.splitlines())
        got = {k.rsplit(";", 1)[1]: int(v) for k, v in lines.items()
               if k.endswith(("alloc_a", "alloc_b", "alloc_leak"))}
        self.assertEqual(got, {"alloc_a": 8 * MiB, "alloc_b": 2 * MiB, "alloc_leak": MiB})
        for k in lines:
            if k.endswith("alloc_a"):
                self.assertTrue(k.endswith(";main;alloc_a"), k)

    def test_diff_of_two_runs(self):
        out = rc.report(self.raw[2], f"--base={self.raw[1]}").stdout
        self.assertIn("bytes                  7.00 MiB -> 11.00 MiB (+4.00 MiB)", out)
        self.assertRegex(out, r"contexts +4 -> 4: 0 new, 0 gone \(0 B\), 1 grew, 0 shrank")
        change = out.split("Largest changes in bytes", 1)[1]
        self.assertRegex(change, r"\n +1 \+4\.00 MiB +grew\n +alloc_a ")
        self.assertRegex(rc.report(self.raw[2]).stdout,
                         r"peak live heap +10\.00 MiB \(10485760\) in 3 blocks at ")

    def test_program_named(self):
        """Each format names the program the profile came from (the
        executable's path among the profile's own segment paths), with the
        number of profiles when several are reported together."""
        out = rc.report(self.raw[1]).stdout
        self.assertIn(f"\nSummary\n  program                {self.exe}\n  contexts ", out)
        both = rc.report(self.raw[1], self.raw[2]).stdout
        self.assertIn(f"\nSummary\n  program                {self.exe} (2 profiles)\n", both)
        dh = json.loads(rc.report(self.raw[1], "--format=dhat").stdout)
        self.assertEqual(dh["cmd"], f"memprof-profdata report of {self.exe} ({UNINSTR})")
        ss = json.loads(rc.report(self.raw[1], "--format=speedscope").stdout)
        self.assertEqual(ss["name"], f"memory profile of {self.exe}: {UNINSTR}")

    @unittest.skipUnless(shutil.which("go"), "Go's pprof (golang-go) is not installed")
    def test_program_named_in_pprof(self):
        pb = self.shared.path("k1.pb.gz")
        rc.report(self.raw[1], "--format=pprof", "-o", pb)
        env = {"HOME": self.shared.dir, "GOCACHE": self.shared.path("gocache")}
        top = harness.run(["go", "tool", "pprof", "-top", pb], env=env).stdout
        self.assertEqual(top.splitlines()[:3],
                         ["File: preloaded", UNINSTR, f"Program: {self.exe}"])

    @unittest.skipUnless(rc.chromium(), "chromium is not installed")
    def test_program_named_in_html(self):
        page = self.shared.path("k1.html")
        rc.report(self.raw[1], "--format=html", "-o", page)
        dom = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(dom.stderr), [])
        body = re.search(r'<table id="summary">.*?<tbody>(.*?)</tbody>', dom.stdout, re.S).group(1)
        first = re.search(r"<tr.*?</tr>", body, re.S).group(0)
        self.assertEqual(html.unescape(re.sub(r"<[^>]+>", " ", first)).split(),
                         ["program", self.exe])


UNINSTR = "Not instrumented (preloaded): no access counts; no hot/cold verdicts"

if __name__ == "__main__":
    harness.main()
