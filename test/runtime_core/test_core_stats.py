"""Allocator statistics (malloc_stats(), atexit=1) go to stderr in LLVM's
line format, never into the profile: the raw profile of a program that
printed them is read by llvm-profdata-22 and by memprof-profdata.  (Both
used to land in front of the raw profile in its file, which no reader
accepted; LLVM 22's runtime does the same, LLVM's later ones use stderr.)"""
import glob
import os
import re
import subprocess

import harness

PROG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs",
                    "stats_and_profile.c")

# LLVM's lines (compiler-rt memprof_stats.cpp), as atexit_stats.cpp checks.
STATS = [r"Stats: \d+M malloced \(\d+M for overhead\) by (\d+) calls",
         r"Stats: \d+M realloced by (\d+) calls",
         r"Stats: \d+M freed by (\d+) calls",
         r"Stats: \d+M really freed by (\d+) calls",
         r"Stats: \d+M \(\d+M-\d+M\) mmaped; \d+ maps, \d+ unmaps",
         r"  mallocs by size class: ",
         r"Stats: malloc large: \d+"]


class StatsTest(harness.ProfTest):
    def run_with(self, opts):
        exe = harness.compile_program(self.scratch, PROG, out="stats")
        prefix = self.scratch.path("prof")
        r, _ = harness.run_program(self.scratch, exe,
                                   env={"MEMPROF_OPTIONS": f"log_path={prefix}:{opts}"})
        (raw,) = glob.glob(prefix + ".*")
        return exe, r.stderr.decode(), raw

    def check_stats(self, err):
        lines = err.splitlines()
        for pat in STATS:
            self.assertTrue(any(re.fullmatch(pat, l) for l in lines), (pat, err))
        # malloc_stats() ran after 4 mallocs (3 + the realloc's), 1 realloc
        # and 3 frees (2 + the realloc's); the first report is its.
        first = [next(int(m.group(1)) for m in map(re.compile(pat).fullmatch, lines) if m)
                 for pat in STATS[:4]]
        self.assertEqual(first, [4, 1, 3, 3])

    def check_readers(self, exe, raw):
        with open(raw, "rb") as f:
            self.assertEqual(f.read(8), b"\x81rforpm\xff")  # magic first
        sites = harness.llvm_show_raw(raw, exe)
        got = [(s["mib"]["AllocCount"], s["mib"]["TotalSize"]) for s in sites
               if s["stack"][0][0] == "site_stats"]
        self.assertEqual(got, [(3, 12000)])
        r = subprocess.run([harness.profdata_tool(), "show", raw,
                            f"--profiled-binary={exe}"], capture_output=True)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertRegex(r.stdout.decode(), r"AllocCount: +3\n(.*\n){3} +TotalSize: +12000\n")

    def test_malloc_stats(self):
        exe, err, raw = self.run_with("")
        self.assertNotIn("exit stats", err)
        self.assertEqual(err.count("malloced"), 1)
        self.check_stats(err)
        self.check_readers(exe, raw)

    def test_atexit_and_malloc_stats(self):
        exe, err, raw = self.run_with("atexit=1")
        self.assertEqual(err.count("MemProfiler exit stats:\n"), 1)
        self.assertEqual(err.count("malloced"), 2)
        self.check_stats(err)
        self.check_readers(exe, raw)


if __name__ == "__main__":
    harness.main()
