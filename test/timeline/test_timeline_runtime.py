"""test_timeline_runtime.py - the runtime's `.timeline` file (timeline=1,
peak_snapshot=1; docs/timeline-format.md) against programs whose live heap
is known: progs/phases.c (a peak reached by one block, then a smaller phase
and leaks), single- and multi-threaded, progs/dumps.c (a second dump and a
forked child), and progs/race.c (threads freeing
at once right after the peak).  Contexts are told apart by their block
sizes in the raw profile's MIBs; the raw profile itself must stay what
llvm-profdata-22 reads."""
import glob
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import harness  # noqa: E402
import timeline_file as tf  # noqa: E402

PROGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs")

# progs/phases.c
N_A, SIZE_A, N_D, SIZE_D, SIZE_C, N_B, SIZE_B = 1200, 4000, 4, 300000, 777, 100, 3000


class _Base(unittest.TestCase):
    prog = None
    exe = None

    @classmethod
    def setUpClass(cls):
        cls.build = harness.Scratch("tlbuild")
        cls.exe = harness.compile_program(cls.build, os.path.join(PROGS, cls.prog))

    @classmethod
    def tearDownClass(cls):
        cls.build.cleanup()

    def setUp(self):
        self.s = harness.Scratch("tl")
        self.addCleanup(self.s.cleanup)

    def run_prog(self, options, *args):
        r, raws = harness.run_program(self.s, self.exe, [str(a) for a in args],
                                      env={"MEMPROF_OPTIONS": options})
        raws = [p for p in raws if not p.endswith((".timeline", ".tmp"))]
        self.assertEqual(len(raws), 1, raws)
        raw = raws[0]
        tl_path = raw + ".timeline"
        self.assertTrue(os.path.exists(tl_path), "no timeline beside " + raw)
        self.assertEqual(glob.glob(self.s.path("*.tmp")), [])
        prof = harness.read_raw(raw)
        self.assertEqual(len(prof), 1)
        tl = tf.read(tl_path)
        self.assertEqual(tl["raw_bytes"], os.path.getsize(raw))
        # The C reader agrees.
        r = harness.run([harness.find_built("test_timeline_read"), "--json", tl_path])
        self.assertIn('"pid": %d' % tl["pid"], r.stdout)
        return raw, prof[0], tl

    @staticmethod
    def ctx_of_size(prof, size):
        """The stack id of the one context whose blocks have `size` bytes."""
        ids = [sid for sid, m in prof["mibs"].items()
               if m["MinSize"] == size and m["MaxSize"] == size]
        assert len(ids) == 1, f"size {size}: contexts {ids}"
        return ids[0]

    @staticmethod
    def by_id(ctx):
        return {sid: (nbytes, blocks) for sid, nbytes, blocks in ctx}


class Phases(_Base):
    prog = "phases.c"

    def check_phases(self, threads, options="timeline=1"):
        raw, prof, tl = self.run_prog(options, threads)
        a, d, c, b = (self.ctx_of_size(prof, s) for s in (SIZE_A, SIZE_D, SIZE_C, SIZE_B))
        peak = self.by_id(tl["peak"]["ctx"])
        # Live at the peak: all of A and D, and C, exactly; none of B.
        self.assertEqual(peak.get(a), (N_A * SIZE_A, N_A))
        self.assertEqual(peak.get(d), (N_D * SIZE_D, N_D))
        self.assertEqual(peak.get(c), (SIZE_C, 1))
        self.assertNotIn(b, peak)
        # C's allocation made the peak (threads=1: the last allocation
        # before A's first free); its MIB's AllocTimestamp is that moment.
        c_ts = prof["mibs"][c]["AllocTimestamp"]
        a_free = prof["mibs"][a]["DeallocTimestamp"]
        if threads == 1:
            self.assertEqual(tl["peak"]["t_ms"], c_ts)
        else:  # thread start-up may allocate after C, before A's frees
            self.assertGreaterEqual(tl["peak"]["t_ms"], c_ts)
            self.assertLessEqual(tl["peak"]["t_ms"], a_free)
        # Live at exit: B and C (the leaks), exactly; no A or D.
        ex = self.by_id(tl["exit"]["ctx"])
        self.assertEqual(ex.get(b), (N_B * SIZE_B, N_B))
        self.assertEqual(ex.get(c), (SIZE_C, 1))
        self.assertNotIn(a, ex)
        self.assertNotIn(d, ex)
        # What else was live (thread start-up's blocks) is small.
        self.assertLess(tl["peak"]["bytes"] - (N_A * SIZE_A + N_D * SIZE_D + SIZE_C), 16384)
        return raw, tl, (a, b, c, d)

    def test_single_thread(self):
        raw, tl, (a, b, c, d) = self.check_phases(1)
        cs = tl["census"]
        self.assertEqual(tl["interval_ms"], 10)
        self.assertGreaterEqual(len(cs), 3)
        # Censuses are at least an interval apart; one sees the peak's
        # contexts whole, a later one B and no A.
        for x, y in zip(cs, cs[1:]):
            self.assertGreaterEqual(y["t_ms"] - x["t_ms"], 10)
        full = [i for i, x in enumerate(cs)
                if self.by_id(x["ctx"]).get(a) == (N_A * SIZE_A, N_A)]
        after = [i for i, x in enumerate(cs)
                 if self.by_id(x["ctx"]).get(b) == (N_B * SIZE_B, N_B)
                 and a not in self.by_id(x["ctx"])]
        self.assertTrue(full and after and full[0] < after[-1], cs)
        # llvm-profdata-22 still reads the raw profile beside it.
        harness.run(["llvm-profdata-22", "show", "--memory", raw,
                     f"--profiled-binary={self.exe}"])

    def test_four_threads(self):
        self.check_phases(4)

    def test_peak_snapshot_only(self):
        raw, tl, _ = self.check_phases(1, "peak_snapshot=1")
        self.assertEqual((tl["interval_ms"], tl["top_n"], tl["census"]), (0, 0, []))

    def test_top_n_bounds_censuses(self):
        raw, prof, tl = self.run_prog("timeline=1:timeline_top=1:timeline_interval_ms=5", 1)
        self.assertTrue(tl["census"])
        for x in tl["census"]:
            self.assertLessEqual(len(x["ctx"]), 1)
            self.assertEqual(sum(v[1] for v in x["ctx"]) + x["other_bytes"],
                             x["live_bytes"])
        self.assertTrue(any(x["other_bytes"] for x in tl["census"]))

    def test_off_by_default(self):
        r, raws = harness.run_program(self.s, self.exe, ["1", "1"])
        self.assertEqual([p for p in raws if p.endswith(".timeline")], [])
        self.assertEqual(len(raws), 1)


class Dumps(_Base):
    """progs/dumps.c: a second dump replaces the timeline (RawBytes follows
    the raw file, which gets a second profile); a forked child writes its
    own pair of files, its inherited blocks live at its exit too."""
    prog = "dumps.c"

    def test_redump_and_fork(self):
        r, raws = harness.run_program(self.s, self.exe, [],
                                      env={"MEMPROF_OPTIONS": "peak_snapshot=1"})
        raws = sorted(p for p in raws if not p.endswith(".timeline"))
        self.assertEqual(len(raws), 2, raws)
        sizes = {}
        for raw in raws:
            profs = harness.read_raw(raw)
            tl = tf.read(raw + ".timeline")
            self.assertEqual(tl["raw_bytes"], os.path.getsize(raw))
            self.assertEqual(int(raw.rsplit(".", 1)[1]), tl["pid"])
            last = profs[-1]
            ex = self.by_id(tl["exit"]["ctx"])
            sizes[len(profs)] = sorted(
                last["mibs"][sid]["MinSize"] for sid in ex
                if sid in last["mibs"] and last["mibs"][sid]["MinSize"] in (1111, 2222, 3333))
        # parent: two dumps, leaks 1111 and 2222; child: one, and 3333 too
        self.assertEqual(sizes, {2: [1111, 2222], 1: [1111, 2222, 3333]})


class Race(_Base):
    """Frees that race right after the peak: each context's recorded blocks
    may miss the blocks other threads freed while the peak was declared
    (at most one a thread in flight), never more."""
    prog = "race.c"
    K, T = 2000, 4

    def test_racing_frees(self):
        exact = 0
        for _ in range(5):
            raw, prof, tl = self.run_prog("peak_snapshot=1", self.T)
            peak = self.by_id(tl["peak"]["ctx"])
            for k in range(self.T):
                sid = self.ctx_of_size(prof, 1000 + 8 * k)
                nbytes, blocks = peak.get(sid, (0, 0))
                self.assertEqual(nbytes, blocks * (1000 + 8 * k))
                self.assertLessEqual(blocks, self.K)
                self.assertGreaterEqual(blocks, self.K - (self.T - 1),
                                        f"thread {k}'s context at the peak")
                exact += blocks == self.K
            for p in glob.glob(self.s.path("memprof.profraw*")):
                os.unlink(p)
        print(f"contexts exact at the peak: {exact} of {5 * self.T}")


if __name__ == "__main__":
    harness.main()
