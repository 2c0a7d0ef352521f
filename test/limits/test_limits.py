"""test_limits.py - memprof-profdata on very large and absurd inputs.

Bounded memory: each run gets RLIMIT_DATA (heap and private anonymous
mappings; the read-only input mapping does not count), so a reader that
allocates in proportion to a count or a size it found in the file dies with
"out of memory" instead of passing.
 - 1 GiB valid raw and indexed files (sparse, built by bigfiles.py from the
   small real profiles in test/damaged/) must be read within 256 MiB and
   give exactly the output of the small file they were grown from.
 - a raw MIB carrying a 16M-entry access histogram (32 MiB of input) must
   be read within 256 MiB or refused with a message naming
   AccessHistogramSize.
 - absurd counts in small files (test/damaged/files/*-huge*) must be refused
   within 5 s and 64 MiB with their message.
Sanitizer builds reserve terabytes of shadow, so there the limit is not
applied (the outputs are still checked).  Skipped when the temp folder has
under 2 GiB free (the files are sparse but may not stay so).
"""
import os
import resource
import shutil
import subprocess
import sys
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bigfiles  # noqa: E402

DAMAGED = os.path.join(os.path.dirname(HERE), "damaged")
SEEDPROG = os.path.join(os.path.dirname(HERE), "fuzz", "seedprog.py")
MIB = 1 << 20


def is_sanitized(tool):
    with open(tool, "rb") as f:
        return b"__asan_init" in f.read()


class LimitsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = harness.Scratch("limits")
        if shutil.disk_usage(cls.scratch.dir).free < 2 << 30:
            cls.scratch.cleanup()
            raise unittest.SkipTest("less than 2 GiB free in the temp folder")
        harness.run([sys.executable, SEEDPROG, "build", cls.scratch.path("bin")])
        cls.binary = cls.scratch.path("bin", "seedprog22")
        cls.tool = harness.profdata_tool()
        cls.limited = not is_sanitized(cls.tool)
        read = lambda n: open(os.path.join(DAMAGED, n), "rb").read()
        cls.raw = read("base-v5.profraw")
        cls.indexed = read("base-llvm22.indexed")

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def run_tool(self, args, data_limit, timeout):
        def limit():
            if self.limited:
                resource.setrlimit(resource.RLIMIT_DATA, (data_limit, data_limit))
        try:
            r = subprocess.run([self.tool, *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=timeout,
                               preexec_fn=limit)
        except subprocess.TimeoutExpired:
            self.fail(f"memprof-profdata {' '.join(args)}: no exit in {timeout} s")
        self.assertGreaterEqual(r.returncode, 0, f"killed by signal {-r.returncode}")
        return r

    def show(self, path, data_limit=256 * MIB, timeout=120):
        return self.run_tool(["show", path, f"--profiled-binary={self.binary}"],
                             data_limit, timeout)

    def expected_show(self, small):
        p = self.scratch.path("small")
        with open(p, "wb") as f:
            f.write(small)
        r = self.show(p)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        return r.stdout

    def check_big(self, make, small, name):
        path = self.scratch.path(name)
        try:
            make(small, path)
            self.assertGreaterEqual(os.path.getsize(path), (1 << 30) - 4096)
            r = self.show(path)
            self.assertEqual(r.returncode, 0, r.stderr.decode()[-2000:])
            self.assertEqual(r.stdout, self.expected_show(small))
            out = self.scratch.path(name + ".memprofdata")
            r = self.run_tool(["merge", path, f"--profiled-binary={self.binary}",
                               "-o", out], 256 * MIB, 120)
            self.assertEqual(r.returncode, 0, r.stderr.decode()[-2000:])
            self.assertGreater(os.path.getsize(out), 0)
        finally:
            for p in (path, path + ".memprofdata"):
                if os.path.exists(p):
                    os.unlink(p)

    def test_1gib_raw_of_zero_mibs(self):
        self.check_big(bigfiles.raw_zero_mibs, self.raw, "zero-mibs.profraw")

    def test_1gib_raw_one_long_stack(self):
        self.check_big(bigfiles.raw_long_stack, self.raw, "long-stack.profraw")

    def test_1gib_raw_segment_table(self):
        self.check_big(bigfiles.raw_many_segments, self.raw, "segments.profraw")

    def test_1gib_indexed_radix_array(self):
        self.check_big(bigfiles.indexed_big_radix, self.indexed, "radix.indexed")

    def test_big_histogram_bounded_or_refused(self):
        path = self.scratch.path("hist.profraw")
        n = (1 << 24) + 4
        bigfiles.raw_big_histogram(self.raw, path, n)
        try:
            r = self.show(path)
            err = r.stderr.decode()
            if r.returncode == 0:
                self.assertIn(f"AccessHistogramSize: {n}".encode(), r.stdout)
            else:
                self.assertEqual(r.returncode, 1)
                self.assertIn(f"AccessHistogramSize {n}", err)
        finally:
            os.unlink(path)

    def test_indexed_histogram_size_merged_with_raw_histogram(self):
        """An indexed file stores AccessHistogramSize but no histogram, so
        4294967295 is well-formed there; merged with a raw profile that has
        a histogram for the same contexts it must not become a 32 GiB
        allocation: refuse with a message naming AccessHistogramSize, or
        merge within 256 MiB."""
        fuzz = os.path.join(os.path.dirname(HERE), "fuzz", "corpus")
        with open(os.path.join(fuzz, "indexed", "llvm22-mp4-full-hist.indexed"), "rb") as f:
            indexed = bigfiles.indexed_set_hist_sizes(f.read(), 0xffffffff)
        path = self.scratch.path("hist-max.indexed")
        with open(path, "wb") as f:
            f.write(indexed)
        raw = os.path.join(fuzz, "raw", "seed-v5-hist.profraw")
        out = self.scratch.path("hist-max.out")
        r = self.run_tool(["merge", path, raw, "--profiled-binary=" +
                           self.scratch.path("bin", "seedprog22h"), "-o", out],
                          256 * MIB, 60)
        err = r.stderr.decode()
        if r.returncode != 0:
            self.assertEqual(r.returncode, 1, err)
            self.assertIn("AccessHistogramSize 4294967295", err)
            self.assertFalse(os.path.exists(out))

    def test_absurd_counts_refused_without_allocating(self):
        files = os.path.join(DAMAGED, "files")
        cases = {}
        with open(os.path.join(DAMAGED, "cases.txt")) as f:
            for line in f:
                if not line.startswith("#"):
                    name, msg, _ = line.rstrip("\n").split("\t")
                    cases[name] = msg
        huge = sorted(n for n in cases if "huge" in n)
        self.assertGreaterEqual(len(huge), 8)
        for name in huge:
            with self.subTest(case=name):
                r = self.show(os.path.join(files, name), data_limit=64 * MIB, timeout=5)
                err = r.stderr.decode()
                self.assertEqual(r.returncode, 1, err)
                self.assertNotIn("out of memory", err)
                self.assertIn(cases[name], err)


if __name__ == "__main__":
    harness.main()
