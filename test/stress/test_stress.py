"""test_stress.py - the runtime under threads, fork, exit, signals, dlopen,
constructors and thread-local destructors.

stress.c runs one scenario per invocation; each test compares AllocCount and
TotalSize per allocation site (summed over the site's contexts, read with
llvm-profdata-22 show --memory) with the numbers the scenario's parameters
imply, and bounds every run with a timeout so a deadlock fails the test.
test_repeat_all runs every scenario 20 times in a row.  test_sampled runs
every scenario of ours with sampling on (sample_interval=256), where most
blocks skip the recording and handlers' allocations may or may not be
sampled, with unsampled blocks in the profiler's heap (unsampled_to_libc=0)
and, but for the scenarios whose signal handlers allocate, in the C
library's: each must exit, write its profiles and have them read.

Runtime: ours (libmemprof.a) unless MEMPROF_STRESS_RUNTIME=llvm.
"""
import collections
import os
import re
import subprocess
import sys
import unittest

import harness

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawparse  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.environ.get("MEMPROF_STRESS_RUNTIME", "ours")
TIMEOUT = 30
REPEATS = 20

# Mirrors of stress.c's parameters.
T_THREADS, T_ITERS, X_ITEMS, R_CHAIN = 8, 300, 400, 40
SIG_RAISES, TIMER_LOOPS = 50, 200000
MT_THREADS, MT_LOOPS = 4, 50000
SPAWN_ROUNDS, SPAWN_THREADS, SPAWN_LOOPS = 300, 4, 500
BG_THREADS, CTOR_BLOCKS, TLS_THREADS = 4, 5, 4


def line_offset(func_head, call):
    """LineOffset of the first line with `call` after stress.c's line
    starting with `func_head` (what llvm-profdata shows)."""
    with open(os.path.join(HERE, "stress.c")) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(func_head))
    return next(i for i in range(start, len(lines)) if call in lines[i]) - start


RUN_DLOPEN_DLOPEN = line_offset("static int run_dlopen(", "dlopen(lib")
RUN_DLOPEN_LIB_ALLOC = line_offset("static int run_dlopen(", "f(13);")


def per_site(sites):
    """leaf function -> (AllocCount, TotalSize) summed over its contexts."""
    agg = collections.defaultdict(lambda: [0, 0])
    for s in sites:
        if s["stack"]:
            a = agg[s["stack"][0][0]]
            a[0] += s["mib"]["AllocCount"]
            a[1] += s["mib"]["TotalSize"]
    return {k: tuple(v) for k, v in agg.items()}


class StressTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = harness.Scratch("stress")
        ld = ["-lpthread", "-ldl"] + (["-rdynamic"] if RUNTIME == "ours" else [])
        cls.exe = harness.compile_program(cls.scratch, os.path.join(HERE, "stress.c"),
                                          runtime=RUNTIME, ldflags=ld)
        cls.lib = cls.scratch.path("libstress.so")
        harness.run(["clang-22", "-O0", "-fPIC", "-shared", "-Wl,--build-id",
                     *harness.PROFILE_FLAGS, os.path.join(HERE, "stress_lib.c"),
                     "-o", cls.lib])
        bid = harness.run(["readelf", "-n", cls.lib]).stdout
        cls.lib_build_id = re.search(r"Build ID: ([0-9a-f]+)", bid).group(1)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def run_mode(self, *args, nprofiles=1, env=None):
        """Run a scenario; returns (stdout, [profile paths]) after removing
        them from the scratch folder's listing for the next run."""
        try:
            r, profs = harness.run_program(self.scratch, self.exe, args, env=env,
                                           timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail(f"stress {' '.join(args)}: no exit within {TIMEOUT}s (deadlock?)")
        self.assertEqual(len(profs), nprofiles, f"profiles of {args}: {profs}")
        return r.stdout.decode(), profs

    def show(self, raw):
        return per_site(harness.llvm_show_raw(raw, self.exe))

    def consume(self, profs):
        for p in profs:
            os.unlink(p)

    # ---- scenarios -------------------------------------------------------
    def check_threads(self):
        _, profs = self.run_mode("threads")
        s = self.show(profs[0])
        per_thread = (T_ITERS // 4) * (16 + 24 + 32 + 40)
        self.assertEqual(s["site_thread"], (T_THREADS * T_ITERS, T_THREADS * per_thread))
        self.assertEqual(s["site_xalloc"], (4 * X_ITEMS, 4 * X_ITEMS * 32))
        self.assertEqual(s["site_rmalloc"], (T_THREADS, T_THREADS * 8))
        chain = sum(8 + 16 * k for k in range(1, R_CHAIN + 1))
        self.assertEqual(s["site_realloc"], (T_THREADS * R_CHAIN, T_THREADS * chain))
        self.assertEqual(s["site_calloc"], (T_THREADS, 4 * sum(range(1, T_THREADS + 1))))
        self.assertEqual(s["site_ctor"], (CTOR_BLOCKS, CTOR_BLOCKS * 48))
        self.consume(profs)

    def check_fork(self):
        out, profs = self.run_mode("fork", nprofiles=2)
        child = re.search(r"child=(\d+) status=0", out)
        self.assertIsNotNone(child, out)
        cprof = [p for p in profs if p.endswith("." + child.group(1))]
        pprof = [p for p in profs if p not in cprof]
        self.assertEqual(len(cprof), 1, profs)
        ps, cs = self.show(pprof[0]), self.show(cprof[0])
        self.assertEqual(ps["site_prefork"], (10, 240))
        self.assertEqual(ps["site_postfork"], (5, 360))
        self.assertNotIn("site_child", ps)
        n, size = ps["site_bg"]
        self.assertGreater(n, 0)
        self.assertEqual(size, 40 * n)
        self.assertEqual(cs["site_child"], (7, 392))
        # The child must not repeat what the parent recorded before fork;
        # only blocks the parent's threads held at fork time may show up
        # as live in the child.
        self.assertNotIn("site_prefork", cs)
        self.assertNotIn("site_postfork", cs)
        self.assertLessEqual(cs.get("site_bg", (0, 0))[0], BG_THREADS)
        self.consume(profs)

    def check_exit(self):
        _, profs = self.run_mode("exit")
        s = self.show(profs[0])
        self.assertEqual(s["site_main"], (9, 9 * 88))
        n, size = s["site_bg"]
        self.assertGreater(n, 0)
        self.assertEqual(size, 40 * n)
        self.consume(profs)

    def check_signal(self):
        out, profs = self.run_mode("signal")
        hits = int(re.search(r"timer_hits=(\d+)", out).group(1))
        s = self.show(profs[0])
        self.assertEqual(s["site_sig"], (SIG_RAISES, SIG_RAISES * 24))
        self.assertEqual(s.get("site_timer", (0, 0)), (hits, 8 * hits))
        self.assertEqual(s["site_loop"], (TIMER_LOOPS, (TIMER_LOOPS // 8) * (16 * 8 + 28)))
        self.consume(profs)

    def check_signal_mt(self):
        out, profs = self.run_mode("signal_mt")
        hits = int(re.search(r"timer_hits=(\d+)", out).group(1))
        s = self.show(profs[0])
        self.assertEqual(s.get("site_timer", (0, 0)), (hits, 8 * hits))
        n = MT_THREADS * MT_LOOPS
        self.assertEqual(s["site_loop"], (n, (n // 8) * (16 * 8 + 28)))
        self.consume(profs)

    def check_signal_spawn(self):
        out, profs = self.run_mode("signal_spawn")
        hits = int(re.search(r"timer_hits=(\d+)", out).group(1))
        s = self.show(profs[0])
        self.assertGreater(hits, 0)
        self.assertEqual(s.get("site_timer", (0, 0)), (hits, 8 * hits))
        n = SPAWN_ROUNDS * SPAWN_THREADS * SPAWN_LOOPS
        self.assertEqual(s["site_spawn"], (n, 32 * n))
        self.consume(profs)

    def check_dlopen(self):
        _, profs = self.run_mode("dlopen", self.lib)
        sites = harness.llvm_show_raw(profs[0], self.exe)
        self.assertEqual(per_site(sites)["site_dl"], (3, 312))
        # lib_site's PCs are not in the executable: llvm-profdata attributes
        # the context to the first frame it can symbolize, run_dlopen, at
        # its call of lib_alloc.  What dlopen allocates itself is at its
        # call (how much is the loader's business; LLVM's frame-pointer
        # walk loses those stacks in libc).
        calls = collections.Counter()
        for site in sites:
            func, line = site["stack"][0][:2]
            if func == "run_dlopen":
                self.assertIn(line, (RUN_DLOPEN_DLOPEN, RUN_DLOPEN_LIB_ALLOC))
                calls[line, "count"] += site["mib"]["AllocCount"]
                calls[line, "size"] += site["mib"]["TotalSize"]
        self.assertEqual((calls[RUN_DLOPEN_LIB_ALLOC, "count"],
                          calls[RUN_DLOPEN_LIB_ALLOC, "size"]), (13, 520))
        with open(profs[0], "rb") as f:
            dump, = rawparse.parse(f.read())
        segs = [sg for sg in dump["segments"] if sg[3] == self.lib_build_id]
        self.assertEqual(len(segs), 1, "dlopened library's segment missing")
        lo, hi = segs[0][0], segs[0][1]
        in_lib = [(c, sz) for sid, c, sz in dump["mibs"]
                  if any(lo <= pc < hi for pc in dump["stacks"][sid])]
        self.assertEqual(in_lib, [(13, 520)])
        self.consume(profs)

    def check_ctor(self):
        _, profs = self.run_mode("ctor")
        s = self.show(profs[0])
        self.assertEqual(s["site_ctor"], (CTOR_BLOCKS, CTOR_BLOCKS * 48))
        self.assertEqual(s["site_tls"], (TLS_THREADS, TLS_THREADS * 64))
        self.consume(profs)

    SCENARIOS = ["threads", "fork", "exit", "signal", "signal_mt",
                 "signal_spawn", "dlopen", "ctor"]

    def skip_reason(self, name):
        if RUNTIME == "llvm" and name == "fork":
            # LLVM 22: the child spins forever in StaticSpinMutex::LockSlow
            # (InsertOrMerge from FinishAndWrite) when fork() happens while
            # another thread holds a MIB lock; it also repeats pre-fork MIBs.
            return "LLVM's runtime deadlocks in the child after fork"
        if RUNTIME == "llvm" and name in ("signal_mt", "signal_spawn"):
            # LLVM 22: SIGSEGV in InsertOrMerge (Allocator::Deallocate) when
            # the handler frees on a thread that is just starting.
            return "LLVM's runtime crashes in a signal handler on a new thread"
        return None

    def scenario(self, name):
        reason = self.skip_reason(name)
        if reason:
            self.skipTest(reason)
        getattr(self, "check_" + name)()

    def test_threads(self):
        self.scenario("threads")

    def test_fork(self):
        self.scenario("fork")

    def test_exit_while_threads_run(self):
        self.scenario("exit")

    def test_signal_handlers_allocate(self):
        self.scenario("signal")

    def test_signals_in_allocating_threads(self):
        # A deadlock here is a race: run it 10 times, the repeat test 20 more.
        for i in range(10):
            with self.subTest(run=i):
                self.scenario("signal_mt")

    def test_signals_while_threads_come_and_go(self):
        # Before handlers stopped waiting for locks their own thread held
        # (and threads registered at start), this hung or crashed in about
        # 1 run in 8: run it 10 times, the repeat test 20 more.
        for i in range(10):
            with self.subTest(run=i):
                self.scenario("signal_spawn")

    def test_dlopen_instrumented_library(self):
        self.scenario("dlopen")

    def test_constructors_and_tls(self):
        self.scenario("ctor")

    # Handlers that allocate meet the C library's allocator with the
    # default unsampled_to_libc=1, and glibc's malloc may deadlock there
    # (stress.c built without the profiler does, in signal_spawn: a handler
    # lands in a thread that holds an arena lock at exit); the profiler's
    # own heap (unsampled_to_libc=0) serves them safely.
    SIGNALS = ("signal", "signal_mt", "signal_spawn")

    def test_sampled(self):
        if RUNTIME != "ours":
            self.skipTest("sampling is our runtime's")
        for i in range(5):
            for name, heap in [(n, h) for n in self.SCENARIOS for h in (1, 0)
                               if h == 0 or n not in self.SIGNALS]:
                env = {"MEMPROF_OPTIONS": f"sample_interval=256:unsampled_to_libc={heap}"}
                with self.subTest(run=i, scenario=name, unsampled_to_libc=heap):
                    args = (name, self.lib) if name == "dlopen" else (name,)
                    _, profs = self.run_mode(*args, nprofiles=2 if name == "fork" else 1,
                                             env=env)
                    for p in profs:
                        self.assertTrue(harness.llvm_show_raw(p, self.exe), p)
                    self.consume(profs)

    def test_repeat_all(self):
        for i in range(REPEATS):
            for name in self.SCENARIOS:
                if self.skip_reason(name):
                    continue
                with self.subTest(run=i, scenario=name):
                    getattr(self, "check_" + name)()


if __name__ == "__main__":
    harness.main()
