"""test_symsec_e2e.py - our symbolized section, end to end and read by an
independent Python parser written from docs/symbolized-section.md.

A program is profiled with LLVM's runtime and merged by memprof-profdata
(default: index 12, memprof v3, with the section) and by llvm-profdata-22.
Asserts:
 - LLVM's `show --memory` prints the same text for both files;
 - with --no-symbolized-section --index-version=13 our file is
   byte-identical to llvm-profdata's;
 - the trailer, CRC-32 and every table of the section parse as documented;
   every frame of the v3 frame array has an entry; the allocation frame of
   obj_alloc names _Z9obj_allocm at its line (marker @new) with its column, and the
   callers short_path/long_path/main have their source lines;
 - sibling paths share their directory nodes (no duplicate nodes);
 - the same program's section read back by memprof-profdata
   (show --symbolized) shows those names.
"""
import os
import struct
import unittest
import zlib

import harness
from harness import run, Scratch


PROGRAM = "symbolized_paths.cc"  # in progs/


def parse_symsec(data):
    """-> (key_kind, [(key, name, path, line, column, discriminator)], nodes)."""
    t = data[-40:]
    assert t[:8] == b"MPSYMSEC", t[:8]
    major, minor, base, size, crc, reserved = struct.unpack_from("<IIQQII", t, 8)
    assert (major, minor, reserved) == (1, 0, 0)
    assert base % 8 == 0 and base + size == len(data) - 40
    sec = data[base:base + size]
    assert zlib.crc32(sec) == crc
    (hsize, kind, n_ent, esize, n_nodes, n_str, eoff, noff, soff, boff,
     bsize) = struct.unpack_from("<6I5Q", sec, 0)
    assert hsize == 64 and esize == 32
    for off in (eoff, noff, soff, boff):
        assert off % 8 == 0
    strs = []
    for i in range(n_str):
        o, n = struct.unpack_from("<II", sec, soff + 8 * i)
        assert o + n <= bsize
        strs.append(sec[boff + o:boff + o + n].decode())
    nodes = [struct.unpack_from("<II", sec, noff + 8 * i) for i in range(n_nodes)]
    NONE = 0xFFFFFFFF

    def path(n):
        parts = []
        while n != NONE:
            comp, parent = nodes[n]
            assert parent == NONE or parent < n
            parts.append(strs[comp])
            n = parent
        return "/".join(reversed(parts))
    ents = []
    for i in range(n_ent):
        key, name, node, line, col, disc, res = struct.unpack_from(
            "<QIIIIII", sec, eoff + 32 * i)
        assert res == 0
        ents.append((key, None if name == NONE else strs[name],
                     None if node == NONE else path(node), line, col, disc))
    return kind, ents, nodes


def v3_frames(data):
    """The memprof v3 frame array: [(guid, line_offset, column, inline)]."""
    mo = struct.unpack_from("<Q", data, 0x28)[0]
    ver, cspo = struct.unpack_from("<QQ", data, mo)
    assert ver == 3
    n = struct.unpack_from("<Q", data, mo + 32)[0]
    p = mo + 40 + 8 * n
    return [struct.unpack_from("<QIIB", data, p + 17 * i)
            for i in range((cspo - p) // 17)]


class SymbolizedSection(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Scratch("symsec")
        src = harness.prog_path(__file__, PROGRAM)
        exe = harness.compile_program(cls.s, src, runtime="llvm")
        _, raws = harness.run_program(cls.s, exe)
        cls.raw, cls.exe = raws[0], exe
        cls.ours = cls.s.path("ours.prof")
        harness.memprof_profdata("merge", cls.raw, f"--profiled-binary={exe}",
                                 "-o", cls.ours)
        cls.llvm = cls.s.path("llvm.prof")
        run(["llvm-profdata-22", "merge", cls.raw, f"--profiled-binary={exe}",
             "-o", cls.llvm])
        with open(cls.ours, "rb") as f:
            cls.data = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.s.cleanup()

    def test_llvm_sees_same_profile(self):
        show = lambda p: run(["llvm-profdata-22", "show", "--memory", p]).stdout
        self.assertEqual(show(self.ours), show(self.llvm))
        plain = self.s.path("plain.prof")
        harness.memprof_profdata("merge", self.raw, f"--profiled-binary={self.exe}",
                                 "--no-symbolized-section", "--index-version=13",
                                 "-o", plain)
        with open(plain, "rb") as f, open(self.llvm, "rb") as g:
            self.assertEqual(f.read(), g.read())

    def test_section_contents(self):
        kind, ents, nodes = parse_symsec(self.data)
        self.assertEqual(kind, 0)
        frames = v3_frames(self.data)
        self.assertEqual(sorted(e[0] for e in ents), list(range(len(frames))))
        self.assertEqual(len(set(nodes)), len(nodes))
        by = {}
        for key, name, path, line, col, disc in ents:
            guid, lo, c, inl = frames[key]
            self.assertEqual(guid, harness.llvm_guid(name))
            self.assertEqual(col, c)
            by.setdefault(name, []).append((os.path.basename(path), line, lo))
        text = harness.prog_text(__file__, PROGRAM)
        line, site = harness.marker_lines(text), harness.marked_sites(text)
        # (file, line, line offset); short_path and long_path are one line.
        self.assertEqual(by["_Z9obj_allocm"], [(PROGRAM, line["new"], site["new"][1])])
        self.assertEqual(sorted(by["_Z10short_pathv"]), [(PROGRAM, line["short"], 0)])
        self.assertEqual(sorted(by["_Z9long_pathv"]), [(PROGRAM, line["long"], 0)])
        self.assertEqual(sorted(by["main"]),
                         [(PROGRAM, line["call_short"], site["call_short"][1]),
                          (PROGRAM, line["call_long"], site["call_long"][1])])

    def test_our_reader_uses_section(self):
        out = harness.memprof_profdata("show", "--symbolized", self.ours).stdout
        self.assertIn("_Z9obj_allocm", out)
        line = harness.marker_lines(harness.prog_text(__file__, PROGRAM))["new"]
        self.assertRegex(out, rf"_Z9obj_allocm \S*{PROGRAM}:{line}:\d+")


if __name__ == "__main__":
    harness.main()
