"""test_rt_sample.py - allocation sampling (sample_interval, sample_seed).

The classes run with the default unsampled_to_libc=-1: in the
instrumented programs, the blocks sampling leaves unrecorded come from
the C library's malloc, and preloaded into a program built without
-fmemory-profile, from the profiler's heap; those named ...OwnHeap run
again with unsampled_to_libc=0 (the profiler's heap), and
TestSamplePreloadedLibc with unsampled_to_libc=1 (the C library's); the
settings record the same blocks for a seed (TestSampleHeaps).

The programs (progs/sample_sites.c, progs/sample_threads.c) allocate known
numbers of blocks of sizes no other site uses, so each site's truth is
known.  A block of s bytes is sampled with probability p = 1 - exp(-s/R)
and then weighs 1/p: for n blocks the estimated count has mean n and
variance n (1 - p) / p (Horvitz-Thompson), the estimated bytes s times
that.  Bounds are stated in those standard deviations.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import harness  # noqa: E402
from rt_common import prog  # noqa: E402

# size -> (blocks, accesses per block) of progs/sample_sites.c
SITES = {32: 200000, 4096: 4000, 65536: 400, 1 << 20: 24, 48: 20000}

# The MIB fields that depend on the clock or the cpu a block ran on: two
# runs of one program differ there and nowhere else.
TIMING = {"AllocTimestamp", "DeallocTimestamp", "TotalLifetime", "MinLifetime",
          "MaxLifetime", "AllocCpuId", "DeallocCpuId", "NumMigratedCpu",
          "NumLifetimeOverlaps", "NumSameAllocCpu", "NumSameDeallocCpu",
          "TotalLifetimeAccessDensity", "MinLifetimeAccessDensity",
          "MaxLifetimeAccessDensity"}


def count_sd(n, size, r):
    """Standard deviation of the estimated count of n blocks of `size`."""
    p = -math.expm1(-size / r)
    return math.sqrt(n * (1 - p) / p)


def rebased(prof, pc):
    """pc as (build id, offset in its module): the same in every run."""
    for start, end, bias, build_id in prof["segments"]:
        if start <= pc < end:
            return build_id, pc - bias
    return None, pc


def note_of(prof):
    """The note without its tables (checked where they matter)."""
    return prof["note"] and {k: v for k, v in prof["note"].items()
                             if k not in ("paths", "temporaries")}


def sites_of(prof):
    """{block size: MIB} of one profile; sizes are the sites' own."""
    out = {}
    for m in prof["mibs"].values():
        if m["MinSize"] != m["MaxSize"]:
            continue
        s = m["MinSize"]
        if s in out:  # a site seen under two stacks (a handler's)
            for k in ("AllocCount", "TotalSize", "TotalAccessCount"):
                out[s][k] += m[k]
        else:
            out[s] = dict(m)
    return out


class SampleTest(harness.ProfTest):
    EXTRA = ""  # appended to every option string: the heap setting

    def build(self, name):
        return harness.compile_program(self.scratch, prog(name), out=name[:-2])

    def profile(self, exe, options, count=1):
        env = {"MEMPROF_OPTIONS": options + self.EXTRA} if options is not None else {}
        r, files = harness.run_program(self.scratch, exe, env=env)
        raws = [f for f in files if not f.endswith(".timeline")]
        self.assertEqual(len(raws), count, f"profiles of {options}")
        profs = [harness.read_raw(f)[0] for f in raws]
        for f in files:
            os.unlink(f)
        return r, profs


class TestSampleFixedSeed(SampleTest):
    R = 65536

    def test_estimates_within_bounds(self):
        exe = self.build("sample_sites.c")
        _, (prof,) = self.profile(exe, f"sample_interval={self.R}:sample_seed=42")
        self.assertEqual(note_of(prof), {"sample_interval": self.R, "uninstrumented": False})
        got = sites_of(prof)
        for size, n in SITES.items():
            with self.subTest(size=size):
                m = got[size]
                sd = count_sd(n, size, self.R)
                # 5 standard deviations, one for rounding, and the weights'
                # excess over 1 when nearly every block is sampled
                slack = 5 * sd + 1 + n * 1e-6
                self.assertLessEqual(abs(m["AllocCount"] - n), slack,
                                     f"count {m['AllocCount']} of {n}")
                self.assertLessEqual(abs(m["TotalSize"] - n * size), size * slack,
                                     f"bytes {m['TotalSize']} of {n * size}")
                self.assertLessEqual(abs(m["TotalAccessCount"] - n * size // 8),
                                     size // 8 * slack, "accesses")
                self.assertEqual((m["MinSize"], m["MaxSize"]), (size, size))
                self.assertEqual((m["MinAccessCount"], m["MaxAccessCount"]),
                                 (size // 8, size // 8))

    def test_same_seed_same_profile(self):
        exe = self.build("sample_sites.c")
        opts = f"sample_interval={self.R}:sample_seed=7"
        _, (a,) = self.profile(exe, opts)
        _, (b,) = self.profile(exe, opts)
        _, (c,) = self.profile(exe, f"sample_interval={self.R}:sample_seed=8")
        key = lambda p: {s: (m["AllocCount"], m["TotalSize"]) for s, m in sites_of(p).items()}
        self.assertEqual(key(a), key(b))
        self.assertNotEqual(key(a), key(c))

    def test_llvm_reads_the_sampled_profile(self):
        """LLVM's reader skips the note and sees our estimates."""
        exe = self.build("sample_sites.c")
        r, raws = harness.run_program(
            self.scratch, exe, env={"MEMPROF_OPTIONS": f"sample_interval={self.R}:sample_seed=3"})
        ours = sites_of(harness.read_raw(raws[0])[0])
        sites = harness.llvm_show_raw(raws[0], exe)
        llvm = {(s["mib"]["AllocCount"], s["mib"]["TotalSize"]) for s in sites}
        self.assertEqual(llvm, {(m["AllocCount"], m["TotalSize"]) for m in ours.values()})
        show = harness.run([harness.profdata_tool(), "show", raws[0],
                            f"--profiled-binary={exe}"])
        said = f"Sampled every {self.R} bytes on average: counts, sizes and lifetimes are estimates"
        self.assertIn(said, show.stderr)
        rep = harness.run([harness.profdata_tool(), "report", raws[0],
                           f"--profiled-binary={exe}"])
        self.assertIn(said, rep.stdout)


class TestSampleText(SampleTest):
    """print_text=1: a sampled profile says so in a line before the MIBs
    (LLVM's text has none; a profile recorded in full keeps LLVM's first
    line), in the terse form too."""
    SAID = ("Sampled every 65536 bytes on average: counts, sizes and lifetimes "
            "are estimates")

    def first_lines(self, exe, options, env=None):
        r, files = harness.run_program(self.scratch, exe, env=dict(
            env or {}, MEMPROF_OPTIONS="log_path=stdout:print_text=1:" + options))
        self.assertEqual(files, [])
        return r.stdout.decode().splitlines()[:2]

    def test_text_says_sampled(self):
        exe = self.build("sample_sites.c")
        self.assertEqual(self.first_lines(exe, "sample_interval=65536"),
                         [self.SAID, "Recorded MIBs (incl. live on exit):"])
        lines = self.first_lines(exe, "sample_interval=65536:print_terse=1")
        self.assertEqual(lines[0], self.SAID)
        self.assertRegex(lines[1], r"^MIB:\d+/")
        self.assertEqual(self.first_lines(exe, "sample_interval=0")[0],
                         "Recorded MIBs (incl. live on exit):")
        self.assertRegex(self.first_lines(exe, "print_terse=1")[0], r"^MIB:\d+/")

    def test_text_says_not_instrumented(self):
        exe = self.scratch.path("plain")
        harness.run(["clang-22", "-O0", "-g", prog("sample_sites.c"), "-o", exe])
        lines = self.first_lines(exe, "", env={"LD_PRELOAD": harness.find_built("libmemprof.so")})
        self.assertEqual(lines, ["Not instrumented (preloaded): no access counts; no "
                                 "hot/cold verdicts", "Recorded MIBs (incl. live on exit):"])


class TestSampleUnbiased(SampleTest):
    """The mean over many seeds is within 4 standard deviations of the
    mean (sd / sqrt(runs)) of the truth, for blocks much smaller than R
    (32, 48 bytes), about R/2 and much larger (64 KiB, 1 MiB)."""
    R = 8192
    RUNS = 30

    def test_mean_over_seeds(self):
        exe = self.build("sample_sites.c")
        sums = {s: [0, 0] for s in SITES}
        for seed in range(1, self.RUNS + 1):
            _, (prof,) = self.profile(exe, f"sample_interval={self.R}:sample_seed={seed}")
            got = sites_of(prof)
            for s in SITES:
                m = got.get(s, {"AllocCount": 0, "TotalAccessCount": 0})
                sums[s][0] += m["AllocCount"]
                sums[s][1] += m["TotalAccessCount"]
        for size, n in SITES.items():
            with self.subTest(size=size):
                mean = sums[size][0] / self.RUNS
                bound = 4 * count_sd(n, size, self.R) / math.sqrt(self.RUNS) + 1
                self.assertLessEqual(abs(mean - n), bound, f"mean count {mean} of {n}")
                acc = sums[size][1] / self.RUNS
                self.assertLessEqual(abs(acc - n * size // 8), size // 8 * bound,
                                     f"mean accesses {acc}")


class TestSampleOff(SampleTest):
    """sample_interval=0 is the unsampled runtime: the same profile as
    with the option unset (bytes equal but for the clock and cpu fields),
    no note, exact counts."""

    def test_zero_is_exact(self):
        exe = self.build("sample_sites.c")
        _, (unset,) = self.profile(exe, None)
        _, (zero,) = self.profile(exe, "sample_interval=0:sample_seed=5")
        for p in (unset, zero):
            self.assertIsNone(p["note"])
        strip = lambda p: {
            "head": (p["version"], p["total"], p["mib_offset"], p["stack_offset"]),
            "stacks": {i: [rebased(p, pc) for pc in pcs] for i, pcs in p["stacks"].items()},
            "mibs": {i: {k: v for k, v in m.items() if k not in TIMING}
                     for i, m in p["mibs"].items()}}
        self.assertEqual(strip(unset), strip(zero))
        got = sites_of(zero)
        for size, n in SITES.items():
            self.assertEqual((got[size]["AllocCount"], got[size]["TotalSize"],
                              got[size]["TotalAccessCount"]), (n, n * size, n * size // 8))


    def test_timeline_turns_sampling_off(self):
        """The timeline counts every block per context: with timeline=1
        sample_interval is refused with a warning and counts stay exact."""
        exe = self.build("sample_sites.c")
        r, (prof,) = self.profile(exe, "timeline=1:sample_interval=65536")
        self.assertIn("sample_interval is ignored with timeline=1", r.stderr.decode())
        self.assertIsNone(prof["note"])
        got = sites_of(prof)
        for size, n in SITES.items():
            self.assertEqual((got[size]["AllocCount"], got[size]["TotalSize"]), (n, n * size))


class TestSampleThreadsForkSignal(SampleTest):
    R = 4096

    def test_threads_fork_handler(self):
        exe = self.build("sample_threads.c")
        r, (parent, child) = self.profile(exe, f"sample_interval={self.R}", count=2)
        runs = int(r.stdout.decode().split()[0])
        for p in (parent, child):
            self.assertEqual(note_of(p), {"sample_interval": self.R, "uninstrumented": False})
        got = sites_of(parent)
        for size, n in ((64, 4 * 100000), (1000, runs)):
            with self.subTest(size=size):
                self.assertLessEqual(abs(got[size]["AllocCount"] - n),
                                     5 * count_sd(n, size, self.R) + 1)
        kid = sites_of(child)
        self.assertNotIn(64, kid, "the child reports only its own blocks")
        self.assertLessEqual(abs(kid[96]["AllocCount"] - 50000),
                             5 * count_sd(50000, 96, self.R) + 1)


class TestSamplePreloaded(SampleTest):
    """libmemprof.so preloaded into a program built without
    -fmemory-profile: estimates of counts and bytes, access counts marked
    absent, and no verdicts in the report."""
    R = 65536

    def test_preloaded(self):
        exe = self.scratch.path("plain")
        harness.run(["clang-22", "-O0", "-g", "-fno-omit-frame-pointer",
                     prog("sample_sites.c"), "-o", exe])
        lib = harness.find_built("libmemprof.so")
        r, raws = harness.run_program(self.scratch, exe, env={
            "LD_PRELOAD": lib,
            "MEMPROF_OPTIONS": f"sample_interval={self.R}:sample_seed=11" + self.EXTRA})
        prof = harness.read_raw(raws[0])[0]
        self.assertEqual(note_of(prof), {"sample_interval": self.R, "uninstrumented": True})
        # each segment's module path, the program's first, each file the
        # one whose build id the segment has
        paths = prof["note"]["paths"]
        self.assertEqual(len(paths), len(prof["segments"]))
        self.assertEqual(paths[0], os.path.realpath(exe))
        self.assertIn(lib, paths)
        for (_, _, _, bid), path in zip(prof["segments"], paths):
            if bid and not path.startswith("linux-vdso"):
                self.assertEqual(harness.gnu_build_id(path), bid.hex(), path)
        got = sites_of(prof)
        for size, n in SITES.items():
            with self.subTest(size=size):
                self.assertLessEqual(abs(got[size]["AllocCount"] - n),
                                     5 * count_sd(n, size, self.R) + 1 + n * 1e-6)
                self.assertEqual(got[size]["TotalAccessCount"], 0)
        rep = harness.run([harness.profdata_tool(), "report", raws[0],
                           f"--profiled-binary={exe}"])
        self.assertIn("Note: Not instrumented (preloaded): no access counts; no hot/cold "
                      "verdicts.\n", rep.stdout)
        self.assertNotIn("clang-22's verdicts", rep.stdout)
        # recording every allocation: exact counts, the flag alone
        _, more = harness.run_program(self.scratch, exe, env={"LD_PRELOAD": lib})
        exact = harness.read_raw([f for f in more if f not in raws][0])[0]
        self.assertEqual(note_of(exact), {"sample_interval": 0, "uninstrumented": True})
        got = sites_of(exact)
        for size, n in SITES.items():
            self.assertEqual((got[size]["AllocCount"], got[size]["TotalSize"]), (n, n * size))
        self.assertNotIn(" cold ", rep.stdout.split("Top ")[0].split("verdicts.")[1])


OWN_HEAP = ":unsampled_to_libc=0"
LIBC_HEAP = ":unsampled_to_libc=1"


class TestSampleFixedSeedOwnHeap(TestSampleFixedSeed):
    EXTRA = OWN_HEAP


class TestSampleThreadsForkSignalOwnHeap(TestSampleThreadsForkSignal):
    EXTRA = OWN_HEAP


class TestSamplePreloadedOwnHeap(TestSamplePreloaded):
    EXTRA = OWN_HEAP


class TestSamplePreloadedLibc(TestSamplePreloaded):
    EXTRA = LIBC_HEAP


class TestSampleHeaps(SampleTest):
    """unsampled_to_libc: where the blocks sampling leaves unrecorded come
    from, and the allocation API over both heaps (progs/sample_heaps.c)."""

    def run_heaps(self, exe, mode, options, preload=False):
        env = {"MEMPROF_OPTIONS": options}
        if preload:
            env["LD_PRELOAD"] = harness.find_built("libmemprof.so")
        r, files = harness.run_program(self.scratch, exe, args=[mode], env=env, check=False)
        for f in files:
            os.unlink(f)
        out = r.stdout.decode().strip()
        if r.returncode:
            out += f" [exit {r.returncode}] {r.stderr.decode(errors='replace')}"
        return out

    def test_unrecorded_blocks_leave_the_heap(self):
        """At R = 1 GiB no block of 32 bytes is recorded: in the
        instrumented program, with the default none of 10000 is the
        profiler's, with unsampled_to_libc=0 and without sampling all are;
        preloaded into a program built without -fmemory-profile, the
        default keeps them all (nothing counts accesses there), and
        unsampled_to_libc=1 none."""
        exe = self.build("sample_heaps.c")
        never = "sample_interval=1073741824"
        self.assertEqual(self.run_heaps(exe, "own", never), "0")
        self.assertEqual(self.run_heaps(exe, "own", never + OWN_HEAP), "10000")
        self.assertEqual(self.run_heaps(exe, "own", ""), "10000")
        plain = self.scratch.path("plain_heaps")
        harness.run(["clang-22", "-O1", "-g", prog("sample_heaps.c"), "-o", plain])
        self.assertEqual(self.run_heaps(plain, "own", never, preload=True), "10000")
        self.assertEqual(self.run_heaps(plain, "own", never + LIBC_HEAP, preload=True), "0")
        self.assertEqual(self.run_heaps(plain, "own", never + ":lazy_shadow=0", preload=True),
                         "0")

    def test_api_across_heaps(self):
        """Every malloc-family call, realloc moving blocks between the
        heaps both ways, at R = 256 bytes (about half the blocks recorded),
        under both settings and preloaded: contents, zeroing, alignment
        and usable sizes hold."""
        exe = self.build("sample_heaps.c")
        plain = self.scratch.path("plain_heaps")
        harness.run(["clang-22", "-O1", "-g", prog("sample_heaps.c"), "-o", plain])
        for extra in ("", OWN_HEAP, LIBC_HEAP):
            for seed in (1, 2):
                opts = f"sample_interval=256:sample_seed={seed}" + extra
                with self.subTest(options=opts):
                    self.assertEqual(self.run_heaps(exe, "api", opts), "ok")
                    self.assertEqual(self.run_heaps(plain, "api", opts, preload=True), "ok")

    def test_glibc_tuning_calls(self):
        """mallopt, mallinfo2 and malloc_trim are glibc's while it serves
        the unrecorded blocks (at R = 1 GiB, all 4000 blocks of 4000
        bytes: mallinfo2 counts them, trim releases their pages), and the
        runtime's answers otherwise (mallinfo2 zeros, trim 0)."""
        exe = self.build("sample_heaps.c")
        never = "sample_interval=1073741824"
        self.assertEqual(self.run_heaps(exe, "tune", never), "mallopt 1 inuse 1 trim 1")
        self.assertEqual(self.run_heaps(exe, "tune", never + OWN_HEAP),
                         "mallopt 1 inuse 0 trim 0")
        self.assertEqual(self.run_heaps(exe, "tune", ""), "mallopt 1 inuse 0 trim 0")

    def test_same_blocks_recorded(self):
        """For one seed both settings record the same blocks: equal
        estimates."""
        exe = self.build("sample_sites.c")
        key = lambda p: {s: (m["AllocCount"], m["TotalSize"]) for s, m in sites_of(p).items()}
        _, (libc,) = self.profile(exe, "sample_interval=65536:sample_seed=7")
        _, (own,) = self.profile(exe, "sample_interval=65536:sample_seed=7" + OWN_HEAP)
        self.assertEqual(key(libc), key(own))


if __name__ == "__main__":
    harness.main()
