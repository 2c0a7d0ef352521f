"""test_roots_peak.py - the censuses at a new high (MEMPROF_OPTIONS=
roots=1:roots_peak_step_kb=K) of progs/roots_peak.c, exact: a census each
time the live heap passes the last one's by K KiB, taken by the allocation
that passes it (which the thread alone holds), the last one within K KiB
of the true peak; none without the option; and with several threads, no
deadlock, censuses that each add up (lib/roots_file.py checks the sums)
and hold every block allocated before the one that passed the step."""
import glob
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import harness  # noqa: E402
import roots_file as rf  # noqa: E402

SRC = harness.prog_path(__file__, "roots_peak.c")
BLOCK = 16384
AT_HIGH, AT_EXIT = 4, 3


class RootsPeak(harness.ProfTest):
    def censuses(self, args, options, ldflags=()):
        exe = harness.compile_program(self.scratch, SRC, out="peak", ldflags=list(ldflags))
        env = {"MEMPROF_OPTIONS": "roots=1" + options}
        _, raws = harness.run_program(self.scratch, exe, [str(a) for a in args], env=env)
        raws = [r for r in raws if re.search(r"\.profraw\.\d+$", r)]
        self.assertEqual(len(raws), 1, raws)
        with open(raws[0] + ".roots", "rb") as f:
            roots = rf.decode(f.read())
        self.assertEqual(roots["version"], 3)
        return roots["census"]

    def held(self, c):
        """{root kind: (reached, retained)}: the global `slots` (1), the thread (3)."""
        return {x["kind"]: (x["reached"], x["retained"]) for x in c["roots"]}

    def test_each_step_and_the_peak(self):
        # 10 blocks up (160 KiB), all freed, 12 up (192 KiB): with a step of
        # 64 KiB, censuses at 4, 8 and 12 blocks; 10 blocks is no new high.
        cs = self.censuses([10, 12], ":roots_peak_step_kb=64")
        self.assertEqual([(c["kind"], c["heap_bytes"], c["heap_blocks"]) for c in cs],
                         [(AT_HIGH, 4 * BLOCK, 4), (AT_HIGH, 8 * BLOCK, 8),
                          (AT_HIGH, 12 * BLOCK, 12), (AT_EXIT, 12 * BLOCK, 12)])
        # the block being allocated is the thread's alone; the stored ones
        # the global's (the allocation path's frames may hold stale
        # addresses of them: shared with the thread, never retained by it)
        for c, n in zip(cs, (4, 8, 12)):
            h = self.held(c)
            self.assertEqual(h[1][0], ((n - 1) * BLOCK, n - 1))
            self.assertEqual(h[3][1], (BLOCK, 1))
            self.assertEqual(c["unreached"], (0, 0, 0, 0))
        self.assertEqual(self.held(cs[3]), {1: ((12 * BLOCK, 12), (12 * BLOCK, 12))})
        self.assertEqual([c["t_ms"] for c in cs], sorted(c["t_ms"] for c in cs))

    def test_last_census_within_a_step_of_the_peak(self):
        # peak 10 blocks (160 KiB): the last census (128 KiB) is below it by
        # less than the step
        cs = self.censuses([10, 0], ":roots_peak_step_kb=64")
        highs = [c["heap_bytes"] for c in cs if c["kind"] == AT_HIGH]
        self.assertEqual(highs, [4 * BLOCK, 8 * BLOCK])
        self.assertLess(10 * BLOCK - highs[-1], 64 << 10)
        cs = self.censuses([10, 0], ":roots_peak_step_kb=16")
        self.assertEqual([c["heap_bytes"] for c in cs if c["kind"] == AT_HIGH],
                         [n * BLOCK for n in range(1, 11)])

    def test_off_by_default(self):
        cs = self.censuses([10, 12], "")
        self.assertEqual([c["kind"] for c in cs], [AT_EXIT])

    def test_threads(self):
        # 4 threads allocate 20 blocks each at once and free them only when
        # all have allocated theirs (a barrier): no deadlock; every census
        # holds at least the 4 blocks whose allocation passed the step, and
        # at most every block (the other threads allocate until the census
        # stops them, roots_stop_threads, so the figures between are not
        # exact)
        cs = self.censuses([20, 0, 4], ":roots_peak_step_kb=64", ldflags=["-lpthread"])
        highs = [c["heap_bytes"] for c in cs if c["kind"] == AT_HIGH]
        self.assertGreaterEqual(len(highs), 1)
        self.assertTrue(all(4 * BLOCK <= h <= 81 * BLOCK for h in highs), highs)
        self.assertEqual(cs[-1]["kind"], AT_EXIT)

if __name__ == "__main__":
    harness.main()
