"""test_roots_bands.py - the roots census's bands (docs/roots-format.md,
section 4.1) of progs/roots_bands.c, exact: which sets of roots share
which blocks, their bytes and blocks, the other sets' remainder, the
roots_bands option, the reach budget's partial sets; and the report's
text of them, from a version 3 file and (no bands) a version 2 one."""
import os
import json
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import harness  # noqa: E402
import roots_file as rf  # noqa: E402
from test_roots import sizes_of  # noqa: E402

SRC = harness.prog_path(__file__, "roots_bands.c")
CFLAGS = ["-g", "-O0", "-fno-omit-frame-pointer"]
# (set of root labels, bytes, blocks), largest first
BANDS = [
    ({"tri_a (PROG)", "tri_b (PROG)", "tri_c (PROG)"}, 1000, 1),
    ({"pair_a (PROG)", "pair_b (PROG)"}, 480, 3),
    ({"nr (named)", "mixed (PROG)"}, 416, 2),
]
SHARED = (1896, 6)
# {block size: bytes} of the shared blocks
SHARED_SIZES = {1000: 1000, 160: 480, 208: 416}
MANY = (64 * 4096, 64)


class RootsBands(harness.ProfTest):
    def build(self, kind):
        if kind == "linked":
            return harness.compile_program(self.scratch, SRC, out="linked", cflags=CFLAGS[2:])
        exe = self.scratch.path("plain")
        harness.run(["clang-22", *CFLAGS, SRC, "-o", exe])
        return exe

    def census(self, kind="linked", args=(), options=""):
        """(program name, raw path, the exit census, {stack id: size})."""
        exe = self.build(kind)
        env = {"MEMPROF_OPTIONS": "roots=1" + options}
        if kind == "preloaded":
            env["LD_PRELOAD"] = harness.find_built("libmemprof.so")
        _, raws = harness.run_program(self.scratch, exe, list(args), env=env)
        raws = [r for r in raws if re.search(r"\.profraw\.\d+$", r)]
        self.assertEqual(len(raws), 1, raws)
        with open(raws[0] + ".roots", "rb") as f:
            roots = rf.decode(f.read())
        self.assertEqual(roots["version"], 3)
        self.assertEqual([c["kind"] for c in roots["census"]], [3])
        return os.path.basename(exe), raws[0], roots["census"][0], sizes_of(raws[0])

    def named(self, prog, c):
        """The census's bands as (set of labels, bytes, blocks)."""
        names = [rf.root_name(c, x).replace(prog, "PROG") for x in c["roots"]]
        return [({names[i] for i in roots}, nbytes, blocks)
                for roots, nbytes, blocks in c["bands"]]

    def check_sums(self, c):
        self.assertEqual((sum(b[1] for b in c["bands"]) + c["other"][0],
                          sum(b[2] for b in c["bands"]) + c["other"][1]), c["shared"])

    def check_exact(self, kind):
        prog, _, c, sizes = self.census(kind)
        self.assertEqual(self.named(prog, c), BANDS)
        self.assertEqual(c["shared"], SHARED)
        self.assertEqual(c["other"], (0, 0))
        self.check_sums(c)
        got = {}
        for sid, nbytes, _ in c["shared_ctx"]:
            got[sizes[sid]] = got.get(sizes[sid], 0) + nbytes
        self.assertEqual(got, SHARED_SIZES)
        for roots, _, _ in c["bands"]:  # indices increase, roots computed
            self.assertEqual(list(roots), sorted(set(roots)))
            self.assertTrue(all(not c["roots"][i]["flags"] & 1 for i in roots))

    def test_linked(self):
        self.check_exact("linked")

    def test_preloaded(self):
        self.check_exact("preloaded")

    def test_fewer_bands(self):
        """roots_bands=2: the third set goes to the other sets; 0: all."""
        prog, _, c, _ = self.census(options=":roots_bands=2")
        self.assertEqual(self.named(prog, c), BANDS[:2])
        self.assertEqual(c["other"], (416, 2))
        self.check_sums(c)
        prog, _, c, _ = self.census(options=":roots_bands=0")
        self.assertEqual(c["bands"], [])
        self.assertEqual(c["other"], SHARED)

    def test_budget(self):
        """16 globals reach one list of 256 KiB: the reached passes stop
        after some (flag bit 0 on the rest); the list's band holds exactly
        the globals whose pass ran, those passed over are in no band, and
        the roots defined before them (passes run in the roots' order)
        give the same bands as without the list."""
        prog, _, c, _ = self.census(args=["many"])
        names = [rf.root_name(c, x).replace(prog, "PROG") for x in c["roots"]]
        many = [i for i, n in enumerate(names) if n.startswith("many_")]
        self.assertEqual(len(many), 16)
        done = {names[i] for i in many if not c["roots"][i]["flags"] & 1}
        self.assertGreaterEqual(len(done), 2)
        self.assertLess(len(done), 16)  # the budget did stop them
        bands = self.named(prog, c)
        self.assertEqual(bands[0], (done, *MANY))
        self.assertEqual(bands[1:], BANDS)
        self.check_sums(c)
        for roots, _, _ in c["bands"]:
            self.assertTrue(all(not c["roots"][i]["flags"] & 1 for i in roots))
        partial = {i for i in many if c["roots"][i]["flags"] & 1}
        self.assertFalse(partial & {i for b in c["bands"] for i in b[0]})


class RootsBandsReport(harness.ProfTest):
    """memprof-profdata report: each band as its roots' labels joined by
    " + ", its bytes and blocks, largest first, then the other sets; a
    version 2 file (no bands) is read and shows none."""

    def run_report(self, options="", version=3, args=()):
        exe = harness.compile_program(self.scratch, SRC, out="app", cflags=CFLAGS[2:])
        _, raws = harness.run_program(self.scratch, exe, [],
                                      env={"MEMPROF_OPTIONS": "roots=1" + options})
        raw = [r for r in raws if re.search(r"\.profraw\.\d+$", r)][0]
        if version != 3:
            with open(raw + ".roots", "rb") as f:
                old = rf.decode(f.read())
            old["version"] = version
            with open(raw + ".roots", "wb") as f:
                f.write(rf.encode(old))
        return harness.memprof_profdata("report", raw, f"--profiled-binary={exe}",
                                        *args).stdout

    def bands_part(self, out):
        at = out.index("Shared by sets of roots")
        return out[at:out.index("Leaked at exit", at)]

    def rows(self, part):
        return [(set(m.group(1).split(" + ")), int(m.group(2)), int(m.group(3)))
                for m in re.finditer(r"^    (.+): (\d+) bytes? in (\d+) blocks?$", part, re.M)]

    def test_bands(self):
        part = self.bands_part(self.run_report())
        want = [({n.replace("PROG", "app") for n in s}, b, k) for s, b, k in BANDS]
        self.assertEqual(self.rows(part), want)
        self.assertNotIn("other sets", part)
        # under the roots table, before the leaks
        self.assertIn("tri_a (app) + tri_b (app) + tri_c (app): 1000 bytes in 1 block\n", part)

    def test_other_sets(self):
        part = self.bands_part(self.run_report(":roots_bands=1"))
        rows = self.rows(part)
        self.assertEqual(rows[0][1:], (1000, 1))
        self.assertEqual(rows[1], ({"other sets"}, 896, 5))
        self.assertEqual(len(rows), 2)

    def test_html_rows_are_the_texts(self):
        # the page's data ("bands", "bandsOther") holds the text's rows
        page = self.scratch.path("r.html")
        self.run_report(":roots_bands=1", args=["--format=html", "-o", page])
        with open(page) as f:
            m = re.search(r'<script id="data" type="application/json">(.*?)</script>',
                          f.read(), re.S)
        (proc,) = json.loads(m.group(1))["roots"]["procs"]
        last = proc["last"]
        self.assertEqual([(set(labels), b, k) for labels, b, k in last["bands"]],
                         [({"tri_a (app)", "tri_b (app)", "tri_c (app)"}, 1000, 1)])
        self.assertEqual(last["bandsOther"], [896, 5])

    def test_version_2(self):
        out = self.run_report(version=2)
        self.assertIn("Who holds the memory at exit", out)
        self.assertNotIn("Shared by sets of roots", out)
        self.assertIn("shared by several 1896 bytes", out)


if __name__ == "__main__":
    harness.main()
