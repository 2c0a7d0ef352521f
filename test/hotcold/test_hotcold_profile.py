"""The -fmemory-profile-use loop closed with libmemprof-hotcold.

progs/contexts.cc is profiled with our runtime, the profile merged with
our tool, and the program rebuilt by clang-22 with -fmemory-profile-use
and -optimize-hot-cold-new: every allocation form becomes one of the ten
__hot_cold_t functions, and the binary links against the library (static
and shared) and runs.  Ground truth is the profile itself: LLVM's hot/cold
rule applied to each context's MIB says which contexts are cold; exactly
those must land in the cold arena (the program asks the library block by
block), the statistics must count exactly their allocations and bytes, and
jemalloc's own counters of the cold arena must agree and be back at zero
live bytes after the program freed everything.
"""
import os
import re

import harness
import hc_common as hc

SRC = os.path.join(hc.PROGS, "contexts.cc")
# The runtime has no size-returning operator new: in the profiled build
# those names are the plain operators (same arguments, and the caller only
# uses the pointer there).
PROFILE_LDFLAGS = ["-Wl,--defsym=__size_returning_new=_Znwm",
                   "-Wl,--defsym=__size_returning_new_aligned=_ZnwmSt11align_val_t"]


@hc.needs_library
class ProfileUse(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.work = harness.Scratch("hotcold-profile")
        exe = harness.compile_program(cls.work, SRC, out="contexts.prof", opt="-O1",
                                      ldflags=PROFILE_LDFLAGS)
        _, raws = harness.run_program(cls.work, exe)
        prof = cls.work.path("contexts.memprofdata")
        tool = harness.profdata_tool()
        harness.run([tool, "merge", *raws, f"--profiled-binary={exe}", "-o", prof])
        show = harness.run([tool, "show", "--symbolized", prof]).stdout
        cls.sites = {s["leaf"]: s["mib"] for s in hc.profile_sites(show)
                     if s["leaf"] and s["leaf"].startswith(("cold_", "warm_"))}
        cls.obj = cls.work.path("contexts.use.o")
        harness.run(["clang++-22", "-c", *hc.USE_FLAGS, f"-fmemory-profile-use={prof}",
                     SRC, "-o", cls.obj])

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def expected(self, cold):
        mibs = [m for m in self.sites.values() if hc.llvm_is_cold(m) == cold]
        return sum(m["AllocCount"] for m in mibs), sum(m["TotalSize"] for m in mibs)

    def test_profile_marks_the_cold_contexts(self):
        # Without this the other checks could pass vacuously.
        self.assertEqual(len(self.sites), 20, sorted(self.sites))
        cold = sorted(leaf for leaf, m in self.sites.items() if hc.llvm_is_cold(m))
        self.assertEqual(cold, sorted(leaf for leaf in self.sites if leaf.startswith("cold_")))

    def test_every_hot_cold_function_is_called(self):
        nm = harness.run(["nm", "-u", self.obj]).stdout
        undefined = {line.split()[-1] for line in nm.splitlines()}
        self.assertEqual(hc.HOT_COLD_SYMBOLS - undefined, set())

    def run_use(self, kind, options):
        exe = hc.build(self.scratch, [self.obj], f"contexts.{kind}", kind)
        r, _ = harness.run_program(self.scratch, exe,
                                   env={"MEMPROF_HOTCOLD_OPTIONS": options})
        out, err = r.stdout.decode(), r.stderr.decode()
        ctx = {m.group(1): (int(m.group(2)), int(m.group(3)))
               for m in re.finditer(r"^ctx (\w+) blocks=(\d+) cold=(\d+)$", out, re.M)}
        return ctx, hc.parse_stats(err)

    def check_cold_arena(self, kind):
        ctx, st = self.run_use(kind, "stats=1")
        self.assertEqual(len(ctx), 20)
        for leaf, mib in self.sites.items():
            with self.subTest(context=leaf):
                blocks, cold = ctx[leaf]
                self.assertEqual(blocks, mib["AllocCount"])
                self.assertEqual(cold, blocks if hc.llvm_is_cold(mib) else 0)
        n_cold, b_cold = self.expected(True)
        n_warm, b_warm = self.expected(False)
        # clang's default hints: cold 1, not cold 128; nothing else.
        self.assertEqual(sorted(st["hint"]), [1, 128])
        h1, h128 = st["hint"][1], st["hint"][128]
        self.assertEqual((h1["allocs"], h1["bytes"]), (n_cold, b_cold))
        self.assertEqual((h1["cold_arena_allocs"], h1["cold_arena_bytes"]), (n_cold, b_cold))
        self.assertEqual((h128["allocs"], h128["bytes"]), (n_warm, b_warm))
        self.assertEqual(h128["cold_arena_allocs"], 0)
        self.assertEqual((st["class"]["cold"]["allocs"], st["class"]["notcold"]["allocs"]),
                         (n_cold, n_warm))
        # jemalloc's own count of the cold arena: the same blocks, all freed.
        arena = st["cold_arena"]
        self.assertEqual(arena["state"], "on")
        self.assertEqual((arena["allocs"], arena["frees"], arena["live_bytes"]),
                         (n_cold, n_cold, 0))

    def test_cold_contexts_in_cold_arena_static(self):
        self.check_cold_arena("static")

    def test_cold_contexts_in_cold_arena_shared(self):
        self.check_cold_arena("shared")

    def test_cold_arena_off(self):
        ctx, st = self.run_use("static", "stats=1:cold_arena=0")
        self.assertEqual({c for _, c in ctx.values()}, {0})
        n_cold, b_cold = self.expected(True)
        self.assertEqual((st["hint"][1]["allocs"], st["hint"][1]["bytes"]), (n_cold, b_cold))
        self.assertEqual(st["hint"][1]["cold_arena_allocs"], 0)
        self.assertEqual(st["cold_arena"], {"state": "off"})

    def test_no_stats_by_default(self):
        ctx, st = self.run_use("shared", "")
        self.assertEqual(len(ctx), 20)
        self.assertIsNone(st["pid"])


if __name__ == "__main__":
    harness.main()
