"""test_report_sampled.py - how a profile was recorded, said by every
output: a sampled profile (sample_interval=R) holds estimates and one of
libmemprof.so preloaded into a program built without -fmemory-profile
has no access counts.  The runtime's note says so in the raw profile;
`merge` keeps it in our symbolized section (version 1.1: the distinct
intervals of the inputs, increasing, 0 for an input that recorded every
allocation, and a flag), and `show` and `report` on the raw or the
indexed file say it in the exact words of docs/memprof-profdata.md:
text notes, HTML banners (rendered in headless Chromium), pprof comments
(`go tool pprof -comments`), speedscope's name, DHAT's cmd; folded on
stderr.  A profile recorded in full gets no facts: its section stays
version 1.0 with a 64-byte header.  Skipped parts (no Chromium, no Go)
show as skipped."""
import gzip
import json
import math
import os
import re
import shutil
import struct
import unittest

import harness
import report_common as rc

PROG = os.path.join(harness.ROOT, "test", "runtime", "progs", "sample_sites.c")
EST = "counts, sizes and lifetimes are estimates"
SAMPLED_64K = f"Sampled every 65536 bytes on average: {EST}"
MIXED = f"Sampled every 4096 or 65536 bytes on average (the merged inputs differ): {EST}"
WITH_EXACT = (f"Sampled every 65536 bytes on average (the merged inputs differ; "
              f"some recorded every allocation): {EST}")
UNINSTR = "Not instrumented (preloaded): no access counts; no hot/cold verdicts"


def section(path):
    """(minor, header_size, facts flags, intervals) of the file's
    symbolized section (docs/symbolized-section.md); facts None for 1.0."""
    with open(path, "rb") as f:
        d = f.read()
    t = len(d) - 40
    assert d[t:t + 8] == b"MPSYMSEC", path
    major, minor, base, size = struct.unpack_from("<IIQQ", d, t + 8)
    assert major == 1
    hsize = struct.unpack_from("<I", d, base)[0]
    if hsize < 80:
        return minor, hsize, None, None
    flags, n, off = struct.unpack_from("<IIQ", d, base + 64)
    return minor, hsize, flags, list(struct.unpack_from(f"<{n}Q", d, base + off))


def notes_of(stderr):
    return [l.split("note: ", 1)[1] for l in stderr.splitlines() if ": note: " in l]


class Sampled(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("sampled")
        s = cls.shared
        cls.exe = harness.compile_program(s, PROG, out="sites")
        cls.raw = {}
        for name, opts in (("r64k", "sample_interval=65536:sample_seed=42"),
                           ("r4k", "sample_interval=4096:sample_seed=42"),
                           ("exact", None)):
            env = {"MEMPROF_OPTIONS": opts} if opts else {}
            _, (raw,) = harness.run_program(s, cls.exe, env=env)
            cls.raw[name] = s.path(name + ".profraw")
            os.rename(raw, cls.raw[name])
        # the same program built without -fmemory-profile, the runtime preloaded
        cls.plain = s.path("plain")
        harness.run(["clang-22", "-O1", "-g", "-fno-omit-frame-pointer", PROG, "-o", cls.plain])
        _, (raw,) = harness.run_program(s, cls.plain,
                                        env={"LD_PRELOAD": harness.find_built("libmemprof.so")})
        cls.raw["plain"] = s.path("plain.profraw")
        os.rename(raw, cls.raw["plain"])
        cls.mp = {}
        for name, inputs, binary in (("r64k", ["r64k"], cls.exe), ("r4k", ["r4k"], cls.exe),
                                     ("mixed", ["r4k", "r64k"], cls.exe),
                                     ("with_exact", ["exact", "r64k"], cls.exe),
                                     ("exact", ["exact"], cls.exe),
                                     ("plain", ["plain"], cls.plain)):
            cls.mp[name] = cls.merge(name, *[cls.raw[i] for i in inputs], binary=binary)

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    @classmethod
    def merge(cls, name, *inputs, binary=None, extra=()):
        out = cls.shared.path(name + ".memprofdata")
        harness.memprof_profdata("merge", *inputs, *([f"--profiled-binary={binary}"] if binary else []),
                                 *extra, "-o", out)
        return out

    def show_notes(self, path):
        return notes_of(harness.memprof_profdata("show", path, f"--profiled-binary={self.exe}").stderr)

    def text_notes(self, path, binary=None):
        out = rc.report(path, *([f"--profiled-binary={binary}"] if binary else [])).stdout
        return re.findall(r"^Note: (.*?)(?: \(allocations, bytes.*\))?\.$", out, re.M)


class TestFacts(Sampled):
    def test_section_records_the_intervals(self):
        # the runtime's note names the program, which makes these 1.3
        # (header 112), which keeps the facts' fields
        self.assertEqual(section(self.mp["r64k"]), (3, 112, 0, [65536]))
        self.assertEqual(section(self.mp["mixed"]), (3, 112, 0, [4096, 65536]))
        self.assertEqual(section(self.mp["with_exact"]), (3, 112, 0, [0, 65536]))
        self.assertEqual(section(self.mp["plain"]), (3, 112, 1, [0]))
        # recorded in full: the 1.0 section, no facts
        self.assertEqual(section(self.mp["exact"]), (0, 64, None, None))

    def test_merging_merged_files_keeps_them(self):
        again = self.merge("again", self.mp["r4k"], self.mp["r64k"])
        self.assertEqual(section(again), (3, 112, 0, [4096, 65536]))
        llvm = self.shared.path("nosec.memprofdata")
        harness.memprof_profdata("merge", self.raw["exact"], f"--profiled-binary={self.exe}",
                                 "--no-symbolized-section", "-o", llvm)
        # a file without facts counts as recorded in full
        self.assertEqual(section(self.merge("with_llvm", llvm, self.mp["r64k"])),
                         (3, 112, 0, [0, 65536]))
        # without the section the facts are gone, as documented
        bare = self.merge("bare", self.mp["r64k"], extra=["--no-symbolized-section"])
        self.assertEqual(self.show_notes(bare), [])

    def test_llvm_reads_the_file_as_without_the_section(self):
        bare = self.merge("bare64", self.raw["r64k"], binary=self.exe,
                          extra=["--no-symbolized-section"])
        show = lambda p: harness.run(["llvm-profdata-22", "show", "--memory", p]).stdout
        self.assertEqual(show(self.mp["r64k"]), show(bare))
        with open(self.mp["r64k"], "rb") as f, open(bare, "rb") as g:
            b = g.read()
            self.assertEqual(f.read()[:len(b)], b)

    def test_show_says_it(self):
        self.assertEqual(self.show_notes(self.raw["r64k"]), [SAMPLED_64K])
        self.assertEqual(self.show_notes(self.mp["r64k"]), [SAMPLED_64K])
        self.assertEqual(self.show_notes(self.mp["mixed"]), [MIXED])
        self.assertEqual(self.show_notes(self.mp["with_exact"]), [WITH_EXACT])
        self.assertEqual(self.show_notes(self.mp["plain"]), [UNINSTR])
        self.assertEqual(self.show_notes(self.mp["exact"]), [])

    def test_text_report_says_it(self):
        self.assertEqual(self.text_notes(self.raw["r64k"], self.exe), [SAMPLED_64K])
        self.assertEqual(self.text_notes(self.mp["r64k"]), [SAMPLED_64K])
        self.assertEqual(self.text_notes(self.mp["mixed"]), [MIXED])
        self.assertEqual(self.text_notes(self.raw["plain"], self.plain), [UNINSTR])
        self.assertEqual(self.text_notes(self.mp["plain"]), [UNINSTR])
        self.assertEqual(self.text_notes(self.mp["exact"]), [])
        # raw inputs merged by report itself
        self.assertEqual(self.text_notes(self.raw["exact"], self.exe), [])
        r = rc.report(self.raw["exact"], self.raw["r64k"], f"--profiled-binary={self.exe}")
        self.assertIn(f"Note: {WITH_EXACT} (allocations, bytes", r.stdout)

    def test_speedscope_dhat_folded(self):
        ss = json.loads(rc.report(self.mp["mixed"], "--format=speedscope").stdout)
        exe, plain = os.path.realpath(self.exe), os.path.realpath(self.plain)
        self.assertEqual(ss["name"], f"memory profile of {exe} (2 profiles): " + MIXED)
        ss = json.loads(rc.report(self.mp["exact"], "--format=speedscope").stdout)
        self.assertEqual(ss["name"], "memory profile")
        dh = json.loads(rc.report(self.mp["plain"], "--format=dhat").stdout)
        self.assertEqual(dh["cmd"], f"memprof-profdata report of {plain} ({UNINSTR})")
        dh = json.loads(rc.report(self.mp["r64k"], "--format=dhat").stdout)
        self.assertEqual(dh["cmd"], f"memprof-profdata report of {exe} ({SAMPLED_64K})")
        dh = json.loads(rc.report(self.mp["exact"], "--format=dhat").stdout)
        self.assertEqual(dh["cmd"], "memprof-profdata report")
        folded = rc.report(self.mp["r64k"], "--format=folded")
        self.assertEqual(notes_of(folded.stderr)[:1], [SAMPLED_64K])
        self.assertNotIn("Sampled", folded.stdout)

    def test_pprof_comment_strings(self):
        """The profile's comment field (13) names the strings, read here
        from the protobuf directly (Go's reader: test_pprof_comments)."""
        def comments(path):
            out = self.shared.path("c.pb.gz")
            rc.report(path, "--format=pprof", "-o", out)
            with gzip.open(out) as f:
                d = f.read()
            strings, idx, i = [], [], 0

            def varint():
                nonlocal i
                v = s = 0
                while True:
                    b = d[i]
                    i += 1
                    v |= (b & 0x7f) << s
                    s += 7
                    if b < 0x80:
                        return v
            while i < len(d):
                key = varint()
                field, wire = key >> 3, key & 7
                if wire == 0:
                    v = varint()
                    if field == 13:
                        idx.append(v)
                elif wire == 2:
                    n = varint()
                    if field == 6:
                        strings.append(d[i:i + n].decode())
                    i += n
                else:
                    self.fail(f"wire type {wire}")
            return [strings[k] for k in idx]
        exe, plain = os.path.realpath(self.exe), os.path.realpath(self.plain)
        self.assertEqual(comments(self.mp["mixed"]), [MIXED, f"Program: {exe} (2 profiles)"])
        self.assertEqual(comments(self.mp["plain"]), [UNINSTR, f"Program: {plain}"])
        self.assertEqual(comments(self.mp["exact"]), [])

    @unittest.skipUnless(shutil.which("go"), "Go's pprof (golang-go) is not installed")
    def test_pprof_comments(self):
        out = self.shared.path("p.pb.gz")
        rc.report(self.mp["r64k"], "--format=pprof", "-o", out)
        env = dict(os.environ)
        env.setdefault("HOME", "/tmp")
        got = harness.run(["go", "tool", "pprof", "-comments", out], env=env).stdout
        self.assertEqual(got.strip().splitlines(),
                         [SAMPLED_64K, f"Program: {os.path.realpath(self.exe)}"])


@unittest.skipUnless(rc.chromium(), "chromium is not installed")
class TestHtmlBanners(Sampled):
    def banners(self, path):
        page = self.shared.path(os.path.basename(path) + ".html")
        rc.report(path, "--format=html", "-o", page)
        dom = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(dom.stderr), [])
        notes = re.search(r'<div id="notes">(.*?)</div>\s*<h2>Summary', dom.stdout, re.S)
        self.assertIsNotNone(notes, dom.stdout[:2000])
        return re.findall(r'<div class="note">(.*?)</div>', notes.group(1))

    def test_banners(self):
        self.assertEqual(self.banners(self.mp["r64k"]), [SAMPLED_64K + "."])
        self.assertEqual(self.banners(self.mp["mixed"]), [MIXED + "."])
        # the preloaded program's banner replaces the "no access" guess
        self.assertEqual(self.banners(self.mp["plain"]), [UNINSTR + "."])
        self.assertEqual(self.banners(self.mp["exact"]), [])


class TestRange(Sampled):
    """The "95% range" of a sampled profile's contexts (text and HTML;
    docs/memprof-profdata.md): each row's value is 1.96 sqrt((1-p)/(n p))
    for its allocations n and average size s, p = 1 - exp(-s/R); over 20
    seeds the truth of progs/sample_sites.c's five sites lies inside it in
    at least 85 of the 100 (seed, site) pairs (95 expected); a profile
    recorded in full has no such column."""
    R = 65536
    TRUTH = {32: 200000, 48: 20000, 4096: 4000, 65536: 400, 1 << 20: 24}
    ROW = re.compile(r"^\s+\d+\s+[\d.]+ \S+\s+(\+-[\d>]+%)\s+[\d.]+%\s+(\d+)\s", re.M)

    def expected(self, mib):
        n, size = mib["AllocCount"], mib["TotalSize"] / mib["AllocCount"]
        p = -math.expm1(-max(size, 1) / self.R)
        return 1.96 * math.sqrt((1 - p) / (n * p))

    def sites(self, raw):
        """{block size: MIB} of a raw profile of sample_sites.c."""
        mibs = harness.read_raw(raw)[0]["mibs"].values()
        return {m["MinSize"]: m for m in mibs if m["MinSize"] == m["MaxSize"]}

    def test_text_rows(self):
        out = rc.report(self.raw["r64k"], f"--profiled-binary={self.exe}").stdout
        self.assertIn("  95% range", out)
        got = {int(n): r for r, n in self.ROW.findall(out)}
        want = {m["AllocCount"]: "+-%d%%" % math.floor(100 * self.expected(m) + 0.5)
                for m in self.sites(self.raw["r64k"]).values()}
        self.assertEqual(len(want), 5)
        self.assertEqual(got, want)
        self.assertEqual(want[24], "+-0%")  # 1 MiB blocks: every one recorded
        exact = rc.report(self.raw["exact"], f"--profiled-binary={self.exe}").stdout
        self.assertNotIn("95% range", exact)

    def test_html_carries_the_ranges(self):
        page = self.shared.path("range.html")
        rc.report(self.raw["r64k"], f"--profiled-binary={self.exe}", "--format=html",
                  "-o", page)
        with open(page) as f:
            m = re.search(r'"err":\[([\d,]*)\]', f.read())
        self.assertTrue(m, "no err array in the sampled page")
        want = sorted(math.floor(100 * self.expected(x) + 0.5) for x in self.sites(self.raw["r64k"]).values())
        self.assertEqual(sorted(int(v) for v in m.group(1).split(",")), want)
        plain = self.shared.path("exact.html")
        rc.report(self.raw["exact"], f"--profiled-binary={self.exe}", "--format=html", "-o", plain)
        with open(plain) as f:
            self.assertNotIn('"err":[', f.read())

    def test_truth_inside_the_range(self):
        inside, pairs = 0, 0
        for seed in range(1, 21):
            _, (raw,) = harness.run_program(self.shared, self.exe, env={
                "MEMPROF_OPTIONS": f"sample_interval={self.R}:sample_seed={seed}"})
            got = self.sites(raw)
            os.unlink(raw)
            for size, n in self.TRUTH.items():
                pairs += 1
                m = got.get(size)
                if m is None:
                    continue  # never sampled: no row, no range
                est = m["AllocCount"]
                inside += abs(est - n) <= self.expected(m) * est + 1
        self.assertGreaterEqual(inside, 85, f"{inside} of {pairs} pairs inside the range")


LEFT_ALIGNED = {"verdict", "function", "file"}


def misaligned(text):
    """The rows of the text report's tables whose columns do not line up
    under their header: a right-aligned column's last character, or a
    left-aligned one's first, at the header's."""
    bad = []
    lines = text.splitlines()
    for i, head in enumerate(lines):
        if not re.match(r"^\s+# {2,}\S", head):
            continue
        cols = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"\S+(?: \S+)*", head)]
        for row in lines[i + 1:]:
            if not row.strip() or not row.startswith(" "):
                break
            if not re.match(r"^\s+\d+ ", row):
                continue  # a frame of the row above, or "... more"
            for start, end, name in cols:
                if name in LEFT_ALIGNED:
                    ok = len(row) > start and row[start] != " " and row[start - 1] == " "
                else:
                    ok = row[end - 1:end] not in ("", " ") and row[end:end + 1] in ("", " ")
                if not ok:
                    bad.append(f"column {name!r} of: {row}")
                    break
    return bad


class TestColumns(Sampled):
    """Every table of the text report lines up with its header: sampled
    or not, preloaded, with --base and with --by."""

    def test_checker_finds_a_shifted_row(self):
        table = "  #        bytes      %\n" + "  1    12.00 KiB  50.0%\n"
        self.assertEqual(misaligned(table), [])
        self.assertEqual(len(misaligned(table.replace("  1 ", "  1  "))), 1)

    def test_every_table_lines_up(self):
        runs = {"exact": (self.mp["exact"],), "sampled": (self.mp["r64k"],),
                "mixed": (self.mp["with_exact"],), "preloaded": (self.mp["plain"],),
                "base": (self.mp["r64k"], f"--base={self.mp['exact']}"),
                "by function": (self.mp["exact"], "--by=function"),
                "by file": (self.mp["r4k"], "--by=file"),
                "preloaded by file": (self.mp["plain"], "--by=file"),
                "sorted by lifetime": (self.mp["exact"], "--sort=lifetime", "--top=0")}
        for name, args in runs.items():
            with self.subTest(name):
                out = rc.report(*args).stdout
                self.assertRegex(out, r"(?m)^\s+# {2,}\S")  # a table was printed
                self.assertEqual(misaligned(out), [])


if __name__ == "__main__":
    harness.main()
