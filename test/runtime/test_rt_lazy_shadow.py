"""test_rt_lazy_shadow.py - the shadow stays untouched until instrumented
code can count (lazy_shadow, runtime/record/rt_shadow.h).

Preloaded into a program built without -fmemory-profile
(progs/lazy_shadow.c), the default keeps none of the shadow resident and
counts nothing; lazy_shadow=0 keeps it as for an instrumented program: the
interceptors' counts (one per 8 bytes memset, copied or compared) and at least the shadow of
the bytes counted resident.  Instrumented code that runs before its
module's constructor (progs/early_hook.c, called from a library's
constructor) keeps its exact counts with the static and the shared
runtime, in both settings: the runtime finds it linked in at start-up.
"""
import os

import harness
import rt_common

SMALL, MID, BIG = 4000, 200000, 8 << 20
SMALL_N = 1000
# memcpy and memcmp of 4000 and 32 bytes between two small blocks: both
# blocks counted by each call
COPIED = 2 * 2 * (4000 // 8 + 32 // 8)


def sites_by_size(prof):
    """{block size: (AllocCount, TotalAccessCount)} of one raw profile."""
    out = {}
    for m in prof["mibs"].values():
        if m["MinSize"] == m["MaxSize"] and m["MinSize"] in (SMALL, MID, BIG):
            out[m["MinSize"]] = (m["AllocCount"], m["TotalAccessCount"])
    return out


class Preloaded(harness.ProfTest):
    def run_plain(self, options):
        exe = self.scratch.path("plain")
        harness.run(["clang-22", "-O0", "-g", rt_common.prog("lazy_shadow.c"), "-o", exe])
        r, raws = harness.run_program(self.scratch, exe, env={
            "LD_PRELOAD": harness.find_built("libmemprof.so"),
            "MEMPROF_OPTIONS": options})
        self.assertEqual(len(raws), 1)
        out = r.stdout.decode().split()
        self.assertEqual(out[2:], ["same", "2"])
        rss = int(out[1])
        return rss, harness.read_raw(raws[0])[0]

    def test_lazy(self):
        rss, prof = self.run_plain("lazy_shadow=1")
        self.assertEqual(rss, 0, "no shadow page resident")
        self.assertEqual({k: prof["note"][k] for k in ("sample_interval", "uninstrumented")},
                         {"sample_interval": 0, "uninstrumented": True})
        self.assertEqual(sites_by_size(prof),
                         {SMALL: (SMALL_N, 0), MID: (1, 0), BIG: (1, 0)})

    def test_kept(self):
        rss, prof = self.run_plain("lazy_shadow=0")
        self.assertEqual({k: prof["note"][k] for k in ("sample_interval", "uninstrumented")},
                         {"sample_interval": 0, "uninstrumented": True})
        self.assertEqual(sites_by_size(prof),
                         {SMALL: (SMALL_N, SMALL_N * SMALL // 8 + COPIED), MID: (1, MID // 8),
                          BIG: (1, BIG // 8)})
        counted_kb = (SMALL_N * SMALL + MID + BIG) // 8 // 1024
        self.assertGreaterEqual(rss, counted_kb)


class BeforeConstructor(harness.ProfTest):
    EXPECTED = {"early_freed": (1, 256, 32), "early_kept": (1, 512, 64),
                "in_main": (1, 1024, 128)}

    def check(self, runtime, ldflags, options):
        lib = self.scratch.path("libearly_hook.so")
        harness.run(["clang-22", "-O0", "-g", "-shared", "-fPIC",
                     rt_common.prog("early_hook_lib.c"), "-o", lib])
        sites, _ = harness.profile_sites(
            self.scratch, rt_common.prog("early_hook.c"), runtime=runtime,
            ldflags=[lib, f"-Wl,-rpath,{self.scratch.dir}", *ldflags],
            env={"MEMPROF_OPTIONS": options})
        marks = harness.marked_sites(harness.prog_text(__file__, "early_hook.c"))
        rt_common.assert_sites(self, sites, marks, self.EXPECTED)

    def shared(self):
        libdir = os.path.dirname(harness.find_built("libmemprof.so"))
        return [f"-L{libdir}", "-lmemprof", f"-Wl,-rpath,{libdir}"]

    def test_static_lazy(self):
        self.check("ours", [], "lazy_shadow=1")

    def test_static_kept(self):
        self.check("ours", [], "lazy_shadow=0")

    def test_shared_lazy(self):
        self.check("shadow", self.shared(), "lazy_shadow=1")

    def test_shared_kept(self):
        self.check("shadow", self.shared(), "lazy_shadow=0")


if __name__ == "__main__":
    harness.main()
