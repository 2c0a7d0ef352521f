"""Merges a fleet can rely on: the indexed file (and `show`'s YAML) of a
merge is the same bytes for any order and any grouping of its inputs, and
one raw input still gives exactly llvm-profdata-22's file.

Six processes of progs/fleet.c (different seeds: shared and unshared
contexts, different counts, blocks live at exit) write six raw profiles.
They are merged flat in three orders, as two halves whose results are
merged, and as an uneven tree; every result must be the same file, and
its totals the sums of the inputs'.  The same holds for the program
preloaded into a build without -fmemory-profile, whose raw profiles count
temporary allocations: their merged counts are the inputs' sums."""
import os
import random
import re
import struct

import harness

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs", "fleet.c")
PEAK_RSS = os.path.join(os.path.dirname(SRC), "peak_rss.c")
SEEDS = [3, 141, 59, 26, 535, 8979]


class MergeOrder(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.fleet = harness.Scratch("fleet")
        cls.exe = harness.compile_program(cls.fleet, SRC, out="fleet")
        cls.raws = []
        for seed in SEEDS:
            _, raws = harness.run_program(cls.fleet, cls.exe, [str(seed)])
            cls.raws += raws
        assert len(cls.raws) == len(SEEDS), cls.raws

    @classmethod
    def tearDownClass(cls):
        cls.fleet.cleanup()

    def merge(self, inputs, name, *flags):
        out = self.scratch.path(name)
        harness.memprof_profdata("merge", *inputs, f"--profiled-binary={self.exe}",
                                 *flags, "-o", out)
        return out

    def read(self, path):
        with open(path, "rb") as f:
            return f.read()

    def yaml(self, path):
        return harness.memprof_profdata("show", path).stdout

    def test_any_order_and_grouping_gives_one_file(self):
        raws = self.raws
        flat = self.merge(raws, "flat.memprofdata")
        want = self.read(flat)
        shuffled = raws[:]
        random.Random(7).shuffle(shuffled)
        variants = {"reverse": self.merge(raws[::-1], "rev.memprofdata"),
                    "shuffled": self.merge(shuffled, "shuf.memprofdata")}
        lo = self.merge(raws[:3], "lo.memprofdata")
        hi = self.merge(raws[3:], "hi.memprofdata")
        variants["halves"] = self.merge([hi, lo], "halves.memprofdata")
        one = self.merge([raws[4]], "one.memprofdata")
        pair = self.merge([raws[0], one], "pair.memprofdata")
        rest = self.merge([raws[5], raws[2], raws[1]], "rest.memprofdata")
        variants["tree"] = self.merge([rest, raws[3], pair], "tree.memprofdata")
        for name, path in variants.items():
            with self.subTest(grouping=name):
                self.assertEqual(self.read(path), want)

    def test_show_of_any_order_and_grouping_prints_one_text(self):
        def show(*inputs):
            return harness.memprof_profdata("show", *inputs,
                                            f"--profiled-binary={self.exe}").stdout
        raws = self.raws
        want = show(*raws)
        self.assertEqual(show(*raws[::-1]), want)
        lo = self.merge(raws[:3], "lo.memprofdata")
        hi = self.merge(raws[3:], "hi.memprofdata")
        # Indexed files carry their schema's fields only: compared apart.
        self.assertEqual(show(hi, lo), show(lo, hi))

    def test_merged_totals_are_the_inputs_sums(self):
        def totals(path):
            recs = harness.parse_memprof_yaml(self.yaml(path))
            return {ctx: (m["AllocCount"], m["TotalSize"])
                    for ctx, m in harness.yaml_contexts(recs).items()}
        merged = totals(self.merge(self.raws, "all.memprofdata"))
        want = {}
        for i, raw in enumerate(self.raws):
            for ctx, (n, size) in totals(self.merge([raw], f"in{i}.memprofdata")).items():
                c, s = want.get(ctx, (0, 0))
                want[ctx] = (c + n, s + size)
        self.assertEqual(merged, want)
        self.assertGreater(len(want), 20)

    def test_no_prefill_gives_the_same_file(self):
        a = self.merge(self.raws, "a.memprofdata")
        b = self.merge(self.raws, "b.memprofdata", "--no-prefill")
        self.assertEqual(self.read(a), self.read(b))

    def test_threads_give_the_same_file(self):
        a = self.merge(self.raws, "auto.memprofdata")
        one = self.merge(self.raws, "one-thread.memprofdata", "--num-threads=1")
        helpers = self.merge(self.raws, "helpers.memprofdata", "--num-threads=2")
        self.assertEqual(self.read(a), self.read(one))
        self.assertEqual(self.read(a), self.read(helpers))

    def threads_started(self, *flags):
        """How many threads a merge of the six raws starts (strace -f)."""
        log = self.scratch.path("clone.log")
        out = self.scratch.path("traced.memprofdata")
        harness.run(["strace", "-f", "-qq", "-e", "trace=clone,clone3", "-o", log,
                     harness.profdata_tool(), "merge", *self.raws,
                     f"--profiled-binary={self.exe}", *flags, "-o", out])
        with open(log) as f:
            return sum(1 for line in f if "clone" in line)

    def test_small_merges_start_no_thread(self):
        # The six raws total a few KB, far below the 8 MiB from which the
        # default starts helper threads; --num-threads=2 starts them anyway.
        if os.environ.get("ASAN_OPTIONS"):
            self.skipTest("the sanitizer tier's runtime starts threads of its own")
        if harness.run(["strace", "-qq", "-o", os.devnull, "true"],
                       check=False).returncode != 0:
            self.skipTest("strace cannot trace here")
        self.assertLess(sum(os.path.getsize(r) for r in self.raws), 8 << 20)
        self.assertEqual(self.threads_started(), 0)
        self.assertEqual(self.threads_started("--num-threads=1"), 0)
        self.assertGreater(self.threads_started("--num-threads=2"), 0)

    def peak_kb(self, inputs):
        wrapper = self.scratch.path("peak_rss")
        if not os.path.exists(wrapper):
            harness.run(["clang-22", "-O1", PEAK_RSS, "-o", wrapper])
        out = self.scratch.path("peak.memprofdata")
        r = harness.run([wrapper, harness.profdata_tool(), "merge", *inputs,
                         f"--profiled-binary={self.exe}", "-o", out])
        return int(r.stderr.split()[-1])

    def test_peak_memory_follows_the_output(self):
        if os.environ.get("ASAN_OPTIONS"):
            self.skipTest("the sanitizer tier's tool keeps freed memory in ASan's quarantine")
        # 300 processes of the same program: the output stays ~32 contexts,
        # so the merge's peak must not grow with the number of inputs.
        raws = list(self.raws)
        for seed in range(1000, 1294):
            _, more = harness.run_program(self.fleet, self.exe, [str(seed)])
            raws += more
        one, many = self.peak_kb(raws[:1]), self.peak_kb(raws)
        self.assertLess(many, one + 2048, f"1 input: {one} KB, {len(raws)}: {many} KB")

    def test_one_raw_input_is_llvm_profdatas_file(self):
        ours = self.merge([self.raws[0]], "ours.memprofdata", "--no-symbolized-section",
                          "--index-version=13")
        llvm = self.scratch.path("llvm.memprofdata")
        harness.run(["llvm-profdata-22", "merge", self.raws[0],
                     f"--profiled-binary={self.exe}", "-o", llvm])
        self.assertEqual(self.read(ours), self.read(llvm))


def temporaries(report):
    """{context's frames: temporary blocks} from a text report's
    temporaries section (all its rows: --top large enough)."""
    section = report.split("\nTemporary allocations", 1)[1].split("\n\n", 1)[0]
    out = {}
    for row in re.split(r"\n(?= +\d+ +\d+ +\S+% )", section)[1:]:
        head, *frames = row.split("\n")
        out[tuple(tuple(f.split()) for f in frames if f.strip())] = int(head.split()[1])
    return out


class PreloadedMergeOrder(harness.ProfTest):
    """The same for fleet.c built without -fmemory-profile and preloaded
    with libmemprof.so, recording every allocation: the runtime counts each
    context's temporary blocks (those freed at once rather than kept),
    which merge keeps (symbolized-section.md section 11) and adds up."""

    @classmethod
    def setUpClass(cls):
        cls.fleet = harness.Scratch("fleet-preloaded")
        cls.exe = cls.fleet.path("fleet")
        harness.run(["clang-22", "-O0", "-g", "-fno-omit-frame-pointer", SRC, "-o", cls.exe])
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        cls.raws = []
        for seed in SEEDS[:4]:
            _, raws = harness.run_program(cls.fleet, cls.exe, [str(seed)], env=env)
            cls.raws += raws
        assert len(cls.raws) == 4, cls.raws

    @classmethod
    def tearDownClass(cls):
        cls.fleet.cleanup()

    def merge(self, inputs, name):
        out = self.scratch.path(name)
        harness.memprof_profdata("merge", *inputs, "-o", out)
        return out

    def read(self, path):
        with open(path, "rb") as f:
            return f.read()

    def temporaries(self, path):
        return temporaries(harness.memprof_profdata("report", path, "--top=1000").stdout)

    def test_any_order_and_grouping_gives_one_file(self):
        raws = self.raws
        want = self.read(self.merge(raws, "flat.memprofdata"))
        self.assertEqual(want[-40:-28], b"MPSYMSEC" + struct.pack("<I", 1))
        self.assertEqual(struct.unpack_from("<I", want, len(want) - 28)[0], 3)  # 1.3: programs
        lo = self.merge(raws[:2], "lo.memprofdata")
        hi = self.merge(raws[2:], "hi.memprofdata")
        one = self.merge([raws[1]], "one.memprofdata")
        variants = {"reverse": self.merge(raws[::-1], "rev.memprofdata"),
                    "halves": self.merge([hi, lo], "halves.memprofdata"),
                    "tree": self.merge([raws[3], one, self.merge([raws[2], raws[0]],
                                                                 "pair.memprofdata")],
                                       "tree.memprofdata")}
        for name, path in variants.items():
            with self.subTest(grouping=name):
                self.assertEqual(self.read(path), want)

    def test_counts_of_a_context_add_up(self):
        want = {}
        for raw in self.raws:
            for ctx, n in self.temporaries(raw).items():
                want[ctx] = want.get(ctx, 0) + n
        self.assertGreater(len(want), 20)
        lo = self.merge(self.raws[:2], "lo.memprofdata")
        hi = self.merge(self.raws[2:], "hi.memprofdata")
        self.assertEqual(self.temporaries(self.merge([lo, hi], "all.memprofdata")), want)


if __name__ == "__main__":
    harness.main()
