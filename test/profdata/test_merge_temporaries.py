"""Temporary allocations through merge: the runtime's per-context counts
(docs/raw-format.md section 7) kept in the symbolized section's table
(docs/symbolized-section.md section 11), so that the report of a merged
file has the raw profile's "Temporary allocations" section.

test/runtime/progs/temporaries.c, preloaded and recording every
allocation, has 11,012 temporary blocks in 5 contexts (test_rt_temporaries
checks the raw counts): 10,000 of 10,000 blocks of 24 bytes (the worker
threads), 1,000 of 1,000 of 64, 10 of 10 of 16, 1 of 1 of 100,000 (the
realloc) and 1 of 100 of 32.  Merged once, the report gives these; a
merged file merged again with the raw profile gives them doubled, the
same file as the raw profile merged with itself or the merged file with
itself."""
import json
import os
import re
import struct
import zlib

import harness

SRC = os.path.join(harness.ROOT, "test", "runtime", "progs", "temporaries.c")
CORPUS = os.path.join(harness.ROOT, "test", "fuzz", "corpus", "indexed")

# (temporary, % of allocs, allocs, bytes) of the report's rows, in order:
# most temporary blocks first, ties by bytes
ROWS = [(10000, "100.0", 10000, 240000), (1000, "100.0", 1000, 64000),
        (10, "100.0", 10, 160), (1, "100.0", 1, 100000), (1, "1.0", 100, 3200)]
TOTAL = 11012
HEAD = "\nTemporary allocations (freed before their thread allocated again): "


def text_section(out):
    """The text report's temporaries section: its heading's numbers and
    its rows (temporary, % of allocs, allocs)."""
    assert HEAD in out, out
    section = out.split(HEAD, 1)[1]
    head = re.match(r"(\d+) of (\d+) \(\S+%\), in (\d+) contexts\n", section).groups()
    rows = re.findall(r"^ +\d+ +(\d+) +(\S+)% +(\d+) ", section, re.M)
    return tuple(map(int, head)), [(int(t), p, int(a)) for t, p, a in rows]


def html_rows(path):
    """The page's temporaries table from its data: (temporary, allocs,
    bytes) of each context in the page's order."""
    with open(path) as f:
        page = f.read()
    d = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>',
                             page, re.S).group(1))
    c = d["ctx"]
    return [(c["tmp"][i], c["allocs"][i], c["bytes"][i]) for i in c["tmpOrder"]]


def section(path):
    """(minor, header_size, temporaries) of the file's symbolized section;
    temporaries: [(call-stack key, count)], None before 1.2."""
    with open(path, "rb") as f:
        d = f.read()
    t = len(d) - 40
    assert d[t:t + 8] == b"MPSYMSEC", path
    _, minor, base, _ = struct.unpack_from("<IIQQ", d, t + 8)
    hsize = struct.unpack_from("<I", d, base)[0]
    if hsize < 96:
        return minor, hsize, None
    n, _, off = struct.unpack_from("<IIQ", d, base + 80)
    return minor, hsize, [struct.unpack_from("<QQ", d, base + off + 16 * i)
                          for i in range(n)]


def programs(path):
    """[(inputs, path)] of the file's symbolized section (1.3)."""
    with open(path, "rb") as f:
        d = f.read()
    t = len(d) - 40
    base = struct.unpack_from("<Q", d, t + 16)[0]
    n, _, at = struct.unpack_from("<IIQ", d, base + 96)
    out = []
    for _ in range(n):
        inputs, size = struct.unpack_from("<II", d, base + at)
        out.append((inputs, d[base + at + 8:base + at + 8 + size].decode()))
        at += (8 + size + 7) // 8 * 8
    return out


def as_version_1_1(path, out):
    """The 1.3 file `path` as the 1.1 writer wrote it: header 80, no
    temporaries or programs table (they end the section), trailer minor 1."""
    with open(path, "rb") as f:
        d = f.read()
    t = len(d) - 40
    base, size = struct.unpack_from("<QQ", d, t + 16)
    sec = bytearray(d[base:base + size])
    off = struct.unpack_from("<Q", sec, 88)[0]
    del sec[off:]
    del sec[80:112]
    struct.pack_into("<I", sec, 0, 80)
    for field in (24, 32, 40, 48, 72):  # offsets of the tables after the header
        struct.pack_into("<Q", sec, field, struct.unpack_from("<Q", sec, field)[0] - 32)
    trailer = b"MPSYMSEC" + struct.pack("<IIQQII", 1, 1, base, len(sec), zlib.crc32(sec), 0)
    with open(out, "wb") as f:
        f.write(d[:base] + bytes(sec) + trailer)


class MergeTemporaries(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("temporaries")
        exe = cls.shared.path("temporaries")
        harness.run(["clang-22", "-O1", "-g", "-pthread", "-fno-omit-frame-pointer",
                     "-fno-optimize-sibling-calls", SRC, "-o", exe])
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        _, raws = harness.run_program(cls.shared, exe, env=env)
        cls.raw = raws[-1]

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    def merge(self, name, *inputs, flags=()):
        out = self.scratch.path(name)
        harness.memprof_profdata("merge", *inputs, *flags, "-o", out)
        return out

    def report(self, path, *flags):
        return harness.memprof_profdata("report", path, *flags).stdout

    def read(self, path):
        with open(path, "rb") as f:
            return f.read()

    def test_report_of_merged_is_report_of_raw(self):
        raw = text_section(self.report(self.raw))
        self.assertEqual(raw[0][0], TOTAL)
        self.assertEqual(raw[0][2], 5)
        self.assertEqual(raw[1], [r[:3] for r in ROWS])
        for v in ("2", "3", "4"):
            with self.subTest(memprof_version=v):
                merged = self.merge(f"v{v}.memprofdata", self.raw,
                                    flags=[f"--memprof-version={v}"])
                self.assertEqual(text_section(self.report(merged)), raw)

    def test_html_of_merged_is_html_of_raw(self):
        want = [(t, a, b) for t, _, a, b in ROWS]
        pages = {}
        for name, path in (("raw", self.raw),
                           ("merged", self.merge("m.memprofdata", self.raw))):
            pages[name] = self.scratch.path(name + ".html")
            self.report(path, "--format=html", "-o", pages[name])
        self.assertEqual(html_rows(pages["raw"]), want)
        self.assertEqual(html_rows(pages["merged"]), want)

    def test_merged_again_adds_up(self):
        once = self.merge("once.memprofdata", self.raw)
        twice = self.merge("twice.memprofdata", once, self.raw)
        head, rows = text_section(self.report(twice))
        self.assertEqual(head[0], 2 * TOTAL)
        self.assertEqual(head[2], 5)
        self.assertEqual(rows, [(2 * t, p, 2 * a) for t, p, a, _ in ROWS])
        # raw + raw, indexed + indexed, either order: the same file
        same = {"raw+raw": self.merge("rr.memprofdata", self.raw, self.raw),
                "indexed+indexed": self.merge("ii.memprofdata", once, once),
                "raw+indexed": self.merge("ri.memprofdata", self.raw, once)}
        for name, path in same.items():
            with self.subTest(inputs=name):
                self.assertEqual(self.read(path), self.read(twice))

    def test_section_table(self):
        minor, hsize, temps = section(self.merge("m.memprofdata", self.raw))
        self.assertEqual((minor, hsize), (3, 112))  # with the program (1.3)
        keys = [k for k, _ in temps]
        self.assertEqual(keys, sorted(set(keys)))
        self.assertEqual(sorted(n for _, n in temps), sorted(r[0] for r in ROWS))

    def test_programs_kept(self):
        """The raw profile's program and its count of inputs (1.3): added
        up by merging again, named by the report of the merged file."""
        exe = os.path.realpath(self.shared.path("temporaries"))
        once = self.merge("p1.memprofdata", self.raw)
        self.assertEqual(programs(once), [(1, exe)])
        twice = self.merge("p2.memprofdata", once, self.raw)
        self.assertEqual(programs(twice), [(2, exe)])
        self.assertIn(f"\n  program                {exe} (2 profiles)\n", self.report(twice))

    def test_damaged_programs_refused(self):
        """A program entry with no inputs, a path running past the
        section or a path holding a zero byte is refused with a message
        (the CRC made right, so the reader's own checks are what speak)."""
        once = self.merge("d.memprofdata", self.raw)
        with open(once, "rb") as f:
            d = bytearray(f.read())
        t = len(d) - 40
        base, size = struct.unpack_from("<QQ", d, t + 16)
        at = struct.unpack_from("<Q", d, base + 104)[0]
        for field, value, says in ((0, 0, "program 0 has 0 inputs"),
                                   (4, 1 << 30, "program 0's path (1073741824 bytes) is empty "
                                                "or runs past the section"),
                                   (8, 0, "program 0's path holds a zero byte")):
            bad = bytearray(d)
            struct.pack_into("<I", bad, base + at + field, value)
            struct.pack_into("<I", bad, t + 32, zlib.crc32(bad[base:base + size]))
            path = self.scratch.path(f"bad{field}.memprofdata")
            with open(path, "wb") as f:
                f.write(bad)
            r = harness.memprof_profdata("report", path, check=False)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(says, r.stderr)

    def test_llvm_reads_the_file_as_without_the_section(self):
        ours = self.merge("m.memprofdata", self.raw)
        bare = self.merge("bare.memprofdata", self.raw, flags=["--no-symbolized-section"])
        self.assertNotIn(HEAD, self.report(bare))
        show = [harness.run(["llvm-profdata-22", "show", "--memory", p]).stdout
                for p in (ours, bare)]
        self.assertEqual(show[0], show[1])

    def test_version_1_1_still_reads(self):
        """A 1.1 section (facts, no temporaries): this profile without its
        table, and the sampled one the 1.1 writer wrote (fuzz corpus)."""
        merged = self.merge("m.memprofdata", self.raw)
        old = self.scratch.path("v11.memprofdata")
        as_version_1_1(merged, old)
        self.assertEqual(section(old)[:2], (1, 80))
        r = harness.memprof_profdata("report", old)
        self.assertNotIn(HEAD, r.stdout)
        self.assertIn("Note: Not instrumented (preloaded)", r.stdout)
        strip = lambda out: re.sub(r"\n  program  .*", "", out.split(HEAD, 1)[0])
        self.assertEqual(strip(r.stdout), strip(self.report(merged)))
        sampled = os.path.join(CORPUS, "sampled-facts.memprofdata")
        self.assertEqual(section(sampled)[:2], (1, 80))
        r = harness.memprof_profdata("show", sampled)
        self.assertIn("Sampled every 64 bytes on average", r.stderr)


if __name__ == "__main__":
    harness.main()
