"""test_torture.py - torture.c, an allocator torture program, run three ways:
under plain glibc (the reference), with our runtime linked in (built with
clang-22 -fmemory-profile) and with libmemprof.so preloaded into the same
program built without instrumentation.  Every run must exit 0 and print
the glibc run's summary; each of ours must write one profile that
memprof-profdata reads, whose allocation counts at torture.c's t_*
allocation functions are exactly the program's own per-API counts.  Both
of ours run once more with sampling on (sample_interval=64), where
unsampled blocks take the allocator's path without recording: the
summary must be the same, the profile readable and its estimated total
within 5% of the program's allocations (R is small: torture.c's blocks
are small and many, some of 0 bytes; at 64 bytes the estimates erred by under 1%).

The glibc run sets MALLOC_PERTURB_ so that glibc fills freed and new
blocks: a check in torture.c that passed only because memory happened to
hold the expected bytes would fail there too.
"""
import os
import re
import subprocess

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "torture.c")
TIMEOUT = 120

# torture.c's allocation functions, by the API name its summary uses.
SITES = {"malloc": "t_malloc", "calloc": "t_calloc", "realloc": "t_realloc",
         "posix_memalign": "t_posix_memalign", "aligned_alloc": "t_aligned_alloc",
         "memalign": "t_memalign"}


def summary_counts(text):
    """{name: int} of every name=number in the summary."""
    return {k: int(v, 0) for k, v in re.findall(r"(\w+)=(0x[0-9a-f]+|\d+)", text)}


class TortureTest(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.build = harness.Scratch("torture-build")
        cls.instrumented = harness.compile_program(
            cls.build, SRC, out="torture-inst", opt="-O2", ldflags=["-lpthread"])
        cls.plain = cls.build.path("torture-plain")
        harness.run(["clang-22", "-O2", "-g", "-fno-omit-frame-pointer", "-pthread",
                     SRC, "-o", cls.plain])
        cls.reference = cls.run_torture(cls.plain, {"MALLOC_PERTURB_": "165"})

    @classmethod
    def tearDownClass(cls):
        cls.build.cleanup()

    @staticmethod
    def run_torture(exe, env):
        e = dict(os.environ)
        e.update(env)
        try:
            r = subprocess.run([exe], env=e, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{exe}: no exit within {TIMEOUT} s (deadlock?)")
        if r.returncode != 0:
            raise AssertionError(f"{exe} exited {r.returncode}\n{r.stdout}{r.stderr[-3000:]}")
        return r.stdout

    def test_glibc_reference(self):
        got = summary_counts(self.reference)
        self.assertEqual(got["failures"], 0)
        self.assertEqual(got["allocations"], sum(got[api] for api in SITES))
        self.assertEqual(got["handed"], got["received"])
        for api in SITES:
            self.assertGreater(got[api], 1000, api)

    def check_profile(self, exe, prefix):
        profs = [f for f in os.listdir(self.scratch.dir) if f.startswith(prefix + ".")]
        self.assertEqual(len(profs), 1, f"profiles: {profs}")
        shown = harness.memprof_profdata("show", self.scratch.path(profs[0]),
                                         f"--profiled-binary={exe}")
        counts = harness.leaf_alloc_counts(shown.stdout, SITES.values())
        per_api = {api: counts[f] for api, f in SITES.items()}
        want = summary_counts(self.reference)
        self.assertEqual(per_api, {api: want[api] for api in SITES})
        self.assertEqual(sum(per_api.values()), want["allocations"])

    def test_static_runtime(self):
        prefix = "prof-static"
        out = self.run_torture(self.instrumented,
                               {"MEMPROF_OPTIONS": f"log_path={self.scratch.path(prefix)}"})
        self.assertEqual(out, self.reference)
        self.check_profile(self.instrumented, prefix)

    def check_sampled(self, exe, env):
        prefix = "prof-sampled"
        env = dict(env, MEMPROF_OPTIONS=f"log_path={self.scratch.path(prefix)}:"
                   "sample_interval=64:sample_seed=1")
        self.assertEqual(self.run_torture(exe, env), self.reference)
        profs = [f for f in os.listdir(self.scratch.dir) if f.startswith(prefix + ".")]
        self.assertEqual(len(profs), 1, f"profiles: {profs}")
        shown = harness.memprof_profdata("show", self.scratch.path(profs[0]),
                                         f"--profiled-binary={exe}")
        self.assertIn("Sampled every 64 bytes on average", shown.stderr)
        counts = harness.leaf_alloc_counts(shown.stdout, SITES.values())
        want = summary_counts(self.reference)["allocations"]
        self.assertLess(abs(sum(counts.values()) - want), want / 20, counts)

    def test_static_runtime_sampled(self):
        self.check_sampled(self.instrumented, {})

    def test_preloaded_runtime_sampled(self):
        self.check_sampled(self.plain, {"LD_PRELOAD": harness.find_built("libmemprof.so")})

    def test_preloaded_runtime(self):
        prefix = "prof-preload"
        out = self.run_torture(self.plain, {
            "LD_PRELOAD": harness.find_built("libmemprof.so"),
            "MEMPROF_OPTIONS": f"log_path={self.scratch.path(prefix)}"})
        self.assertEqual(out, self.reference)
        self.check_profile(self.plain, prefix)


if __name__ == "__main__":
    harness.main()
