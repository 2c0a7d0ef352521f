"""libstdc++'s emergency exception pool in the reports (report_pool.c):
the 72704-byte block libstdc++ allocates before main and holds to the end,
in a C++ program (progs/strings.cc, which frees everything else) run with
MEMPROF_OPTIONS=timeline=1, both linked with our runtime (the pool has no
context then: its frames are in libstdc++, which report symbolizes only
for preloaded programs; its timeline names it) and built without
-fmemory-profile with libmemprof.so preloaded (its context is named).
Either way, text and HTML: the summary counts it once and names it, and it
is no leak (live at exit, never freed: nothing).  The preloaded program's
page also shows nothing made of access counts (no density, accesses or
verdict column, no verdict filter); headless Chromium, skipped visibly
without it."""
import html
import json
import os
import re
import unittest

import harness
import report_common as rc
import test_report_sampled

STRINGS = os.path.join(rc.HERE, "progs", "strings.cc")
POOL = 72704


def data_of(page):
    with open(page) as f:
        return json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>',
                                    f.read(), re.S).group(1))


def text_of(dom):
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", dom)))


class Pool(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("report-pool")
        s = cls.shared
        env = dict(rc.FP_ONLY)
        env["MEMPROF_OPTIONS"] += ":timeline=1"
        cls.linked = harness.compile_program(s, STRINGS, out="linked", opt="-O1")
        _, raws = harness.run_program(s, cls.linked, env=env)
        cls.linked_raw = [r for r in raws if not r.endswith(".timeline")][0]
        cls.plain = s.path("plain")
        harness.run(["clang++-22", "-O1", "-g", "-fno-omit-frame-pointer", STRINGS, "-o", cls.plain])
        env["LD_PRELOAD"] = harness.find_built("libmemprof.so")
        _, raws = harness.run_program(s, cls.plain, env=env)
        cls.plain_raw = [r for r in raws if not r.endswith(".timeline")][0]

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    def allocs(self, raw):
        """The raw profile's allocations and those of the pool's stack."""
        prof = harness.read_raw(raw)[0]
        pool = [m for m in prof["mibs"].values() if m["TotalSize"] == POOL and m["AllocCount"] == 1]
        self.assertEqual(len(pool), 1)
        return sum(m["AllocCount"] for m in prof["mibs"].values())

    def check_text(self, out):
        self.assertEqual(test_report_sampled.misaligned(out), [])
        self.assertIn("  exception pool         71.00 KiB (72704) in 1 block: the libstdc++ exception pool, "
                      "allocated by libstdc++ before main and held by it for the whole run: still "
                      "reachable, not a leak\n", out)
        self.assertIn("  live at exit           71.00 KiB (72704) in 1 block, of which the libstdc++ "
                      "exception pool 72704 in 1 block (still reachable: not a leak)\n", out)
        self.assertIn("\nLive at exit (never freed): 0 bytes in 0 blocks\n"
                      "  nothing: every block the program allocated was freed\n", out)
        self.assertIn("\nStill reachable at exit: 72704 bytes in 1 block: the libstdc++ exception pool", out)

    def check_html(self, page, pool_ctx):
        d = data_of(page)
        self.assertEqual(d["tl"]["reachable"], [POOL, 1])
        self.assertEqual(d["tl"]["atexit"], [])
        self.assertEqual(len(d["ctx"]["pool"]), pool_ctx)
        if not rc.chromium():
            self.skipTest("chromium is not installed (text and the page's data checked)")
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        text = text_of(r.stdout)
        self.assertIn("exception pool 71.00 KiB (72,704) in 1 block: the libstdc++ exception pool", text)
        self.assertIn("Live at exit (never freed): 0 bytes in 0 blocks", text)
        self.assertIn("Still reachable at exit: 72,704 bytes in 1 block: the libstdc++ exception pool", text)
        return r.stdout

    def test_linked(self):
        self.allocs(self.linked_raw)
        args = (self.linked_raw, f"--profiled-binary={self.linked}")
        out = rc.report(*args).stdout
        self.check_text(out)
        # the pool is not among the contexts: the summary adds it (the
        # strings, allocated inside libstdc++, have no context either)
        ctx = sum(int(a) for a in re.findall(r"^ +\d+ +\S+ \S+ +\S+% +(\d+) ", out, re.M))
        n = ctx + 1
        self.assertIn("  allocations            %d (%d in the contexts, 1 the libstdc++ "
                      "exception pool's)\n" % (n, ctx), out)
        self.assertIn("\n     2          72704   35.2%          1\n      [libstdc++ exception pool: ", out)
        page = self.scratch.path("linked.html")
        rc.report(*args, "--format=html", "-o", page)
        dom = self.check_html(page, 0)
        self.assertIn("allocations %s (%s in the contexts, 1 the libstdc++ exception pool's)"
                      % (format(n, ","), format(n - 1, ",")), text_of(dom))

    def test_preloaded(self):
        n = self.allocs(self.plain_raw)
        args = (self.plain_raw, f"--profiled-binary={self.plain}")
        out = rc.report(*args).stdout
        self.check_text(out)
        # counted once, among the contexts
        self.assertIn("  allocations            %d\n" % n, out)
        # its context is named where it is listed
        self.assertRegex(out, r"\n +\d+ +71\.00 KiB .*\n      \[libstdc\+\+ exception pool: ")
        page = self.scratch.path("plain.html")
        rc.report(*args, "--format=html", "-o", page)
        dom = self.check_html(page, 1)
        self.assertIn("allocations %s " % format(n, ","), text_of(dom))
        head = re.search(r'<table id="ctx"><thead><tr>(.*?)</tr>', dom, re.S).group(1)
        self.assertEqual(re.findall(r"<th[^>]*>([^<]*)</th>", head),
                         ["#", "bytes", "%", "allocs", "avg size", "avg lifetime",
                          "allocation site", "location"])
        rows = re.search(r'<table id="ctx">.*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
        self.assertIn("<td>libstdc++ exception pool</td>", rows)
        self.assertRegex(dom, r'<label style="display: none;">Verdict:')
        self.assertNotIn('<option value="acc">', dom)
        self.assertNotIn("never accessed", text_of(dom))

    def test_preloaded_sampled(self):
        """Sampled, a recorded pool weighs 1/p (p = 1 - exp(-72704/R), 2.3
        at R = 128 KiB) in the context's estimates, but the summary counts
        the pool the process has: one block.  The seed is one whose draws
        record the pool (each does with probability p)."""
        env = dict(rc.FP_ONLY)
        env["LD_PRELOAD"] = harness.find_built("libmemprof.so")
        for seed in range(1, 40):
            env["MEMPROF_OPTIONS"] = rc.FP_ONLY["MEMPROF_OPTIONS"] + \
                f":sample_interval=131072:sample_seed={seed}"
            _, raws = harness.run_program(self.scratch, self.plain, env=env)
            raw = [r for r in raws if not r.endswith(".timeline")][0]
            pool = [m for m in harness.read_raw(raw)[0]["mibs"].values()
                    if m["MinSize"] == POOL and m["MaxSize"] == POOL]
            if pool:
                break
            os.unlink(raw)
        self.assertEqual([m["AllocCount"] for m in pool], [2], "the estimate, 2.3 rounded")
        out = rc.report(raw).stdout
        self.assertIn("  exception pool         71.00 KiB (72704) in 1 block: the libstdc++ "
                      "exception pool, ", out)


if __name__ == "__main__":
    harness.main()
