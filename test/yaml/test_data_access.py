"""test_data_access.py - data-access profiles (YAML `DataAccessProfiles`,
the memprof v4 blob) against llvm-profdata-22.

Ground truth: `llvm-profdata-22 merge X.yaml -o F --memprof-version=4`
(index version 13, LLVM 22's default) and `llvm-profdata-22 show --memory
F`.  For every shape: our merge of the YAML is byte-identical to LLVM's; our
show of LLVM's file and of ours prints what LLVM's show prints (less its
comment lines); our merge of our file and of LLVM's file gives the same
bytes again (LLVM's merge of an indexed file leaves the data-access profile
out, ours keeps it: docs/memprof-profdata.md).  Bad YAML and damaged blobs
are refused with a message.
"""
import struct
import unittest

import harness
from harness import ProfTest, memprof_profdata, run

LLVM = "llvm-profdata-22"
V4 = ["--memprof-version=4", "--index-version=13"]

HEAP = """HeapProfileRecords:
  - GUID: 0x1
    AllocSites:
      - Callstack:
          - { Function: 0x2, LineOffset: 1, Column: 2, IsInlineFrame: false }
        MemInfoBlock: { AllocCount: 3, TotalSize: 30, TotalLifetime: 5 }
"""

SHAPES = {
    "symbols_only": """DataAccessProfiles:
  SampledRecords:
    - { Symbol: var1, AccessCount: 1000 }
    - { Symbol: var2.llvm.125, AccessCount: 5 }
    - { Symbol: _ZL3bar.__uniq.77.llvm.4, AccessCount: 5 }
    - { Symbol: .str.1, AccessCount: 77 }
""",
    "hashes_only": """DataAccessProfiles:
  SampledRecords:
    - { Hash: 101010, AccessCount: 145 }
    - { Hash: 0x10, AccessCount: 145 }
    - { AccessCount: 3 }
    - { Hash: 18446744073709551615, AccessCount: 18446744073709551615 }
""",
    "both_with_locations": """DataAccessProfiles:
  SampledRecords:
    - Symbol: var1
      AccessCount: 1000
      Locations:
        - { FileName: a.c, Line: 3 }
        - { FileName: /src/dir/b.c, Line: 4 }
    - { Symbol: var2, AccessCount: 5 }
    - Hash: 101010
      AccessCount: 145
      Locations: [ { FileName: /src/dir/b.c, Line: 7 }, {}, { Line: 9 } ]
    - { Symbol: x, Hash: 5, AccessCount: 5, Locations: [] }
    - { Symbol: '', Hash: 6, AccessCount: 1000 }
  KnownColdSymbols: [ foo, var1, foo.llvm.9 ]
  KnownColdStrHashes: [ 999, 1001, 999 ]
""",
    "cold_symbols_only": """DataAccessProfiles:
  KnownColdSymbols: [ b.llvm.3, a, b, a, 'x:y', '-1', 'true', 'caf\u00e9', "t\\tab" ]
""",
    "cold_hashes_only": """DataAccessProfiles:
  KnownColdStrHashes: [ 5, 3, 5, 0x10, 18446744073709551615, 1000000000000,
                        2000000000000, 3000000000000, 4000000000000,
                        5000000000000, 6000000000000, 7, 8, 9 ]
""",
    "keys_in_another_order": """DataAccessProfiles:
  KnownColdStrHashes: []
  KnownColdSymbols: [ c1, f.c ]
  SampledRecords:
    - { Locations: [ { Line: 2, FileName: f.c } ], AccessCount: 9, Symbol: s }
""",
}


def body(shape, heap=True):
    return "---\n" + (HEAP if heap else "") + SHAPES[shape]


def llvm_show(path):
    """LLVM's show without its comment lines and summary document marker."""
    text = run([LLVM, "show", "--memory", path]).stdout
    return strip_comments(text[text.index("\n---\n") + 1:])


def strip_comments(text):
    return "".join(l for l in text.splitlines(keepends=True) if not l.startswith("#"))


def read(path):
    with open(path, "rb") as f:
        return f.read()


class DataAccessVsLlvm(ProfTest):
    def merge_both(self, name, text):
        src = self.scratch.write(name + ".yaml", text)
        ours, llvm = self.scratch.path(name + ".ours"), self.scratch.path(name + ".llvm")
        run([LLVM, "merge", src, "-o", llvm, "--memprof-version=4"])
        memprof_profdata("merge", src, "-o", ours, *V4)
        return ours, llvm

    def check_shape(self, name, text):
        ours, llvm = self.merge_both(name, text)
        self.assertEqual(read(ours), read(llvm), f"{name}: merge differs")
        want = llvm_show(llvm)
        self.assertIn("DataAccessProfiles:\n", want)
        for f in (ours, llvm):
            got = strip_comments(memprof_profdata("show", f).stdout)
            self.assertEqual(got, want, f"{name}: show of {f}")
        # merged again: ours keeps it, from our file and from LLVM's
        for f in (ours, llvm):
            again = self.scratch.path(name + ".again")
            memprof_profdata("merge", f, "-o", again, *V4)
            self.assertEqual(read(again), read(llvm), f"{name}: re-merge of {f}")
        return want

    def test_shapes_with_heap_records(self):
        for name in SHAPES:
            with self.subTest(name):
                self.check_shape(name, body(name))

    def test_shapes_alone(self):
        for name in SHAPES:
            with self.subTest(name):
                self.check_shape(name + "_alone", body(name, heap=False))

    def test_show_facts(self):
        """Spot checks of what LLVM does that the comparisons rely on."""
        want = self.check_shape("both", body("both_with_locations"))
        recs = want[want.index("SampledRecords:"):want.index("KnownColdSymbols:")]
        # by access count, most first, ties in input order
        self.assertLess(recs.index("Symbol:          var1"), recs.index("Hash:            6"))
        self.assertLess(recs.index("Hash:            6"), recs.index("Hash:            101010"))
        self.assertIn("        - FileName:        ''\n          Line:            9\n", recs)
        self.assertIn("  KnownColdSymbols:\n    - foo\n    - var1\n", want)
        self.assertIn("  KnownColdStrHashes: [ 999, 1001 ]\n", want)
        cold = self.check_shape("cold", body("cold_symbols_only"))
        self.assertIn("    - '-1'\n", cold)
        self.assertIn("    - 'x:y'\n", cold)
        self.assertIn('    - "caf\u00e9"\n', cold)
        self.assertIn('    - t\tab\n', cold)  # a tab needs no quotes
        hashes = self.check_shape("hashes", body("cold_hashes_only"))
        self.assertNotIn("18446744073709551615", hashes)  # LLVM's set drops it
        self.assertIn(", \n                        ", hashes)  # wrapped

    def test_blob_layout(self):
        """The blob as the spec describes it (zlib at level 9, padding)."""
        ours, _ = self.merge_both("l", body("both_with_locations"))
        d = read(ours)
        memprof = struct.unpack_from("<Q", d, 0x28)[0]
        self.assertEqual(struct.unpack_from("<Q", d, memprof)[0], 4)
        off = struct.unpack_from("<Q", d, memprof + 32)[0]
        rec_table = struct.unpack_from("<Q", d, memprof + 24)[0]
        self.assertGreater(off, rec_table)
        n_strs, n_cold, blob_len = struct.unpack_from("<3Q", d, off)
        # var1 a.c /src/dir/b.c var2 '' x foo (cold symbols are added too)
        self.assertEqual((n_strs, n_cold), (7, 2))
        blob = d[off + 24:off + 24 + blob_len]
        self.assertEqual(blob[2:4], b"\x78\xda")
        import zlib
        names = zlib.decompress(blob[2:]).split(b"\x01")
        self.assertEqual(names, [b"var1", b"a.c", b"/src/dir/b.c", b"var2", b"",
                                 b"x", b"foo", b"foo", b"var1"])

    def test_v3_has_no_place_for_it(self):
        src = self.scratch.write("v3.yaml", body("symbols_only"))
        out, llvm = self.scratch.path("v3.ours"), self.scratch.path("v3.llvm")
        r = memprof_profdata("merge", src, "-o", out, "--memprof-version=3",
                             "--index-version=13")
        run([LLVM, "merge", src, "-o", llvm, "--memprof-version=3"])
        self.assertEqual(read(out), read(llvm))
        self.assertIn("data-access profile", r.stderr)

    def test_several_inputs_merge(self):
        """LLVM keeps the last YAML input's (per thread); we merge: counts
        add up, locations and known-cold sets are united, in a canonical
        order (symbols by name, then hashes), so the input order does not
        matter."""
        a = self.scratch.write("a.yaml", """---
DataAccessProfiles:
  SampledRecords:
    - { Symbol: v, AccessCount: 5, Locations: [ { FileName: a.c, Line: 1 } ] }
    - { Hash: 7, AccessCount: 1 }
  KnownColdSymbols: [ c ]
""")
        b = self.scratch.write("b.yaml", """---
DataAccessProfiles:
  SampledRecords:
    - { Symbol: v.llvm.2, AccessCount: 6, Locations: [ { FileName: a.c, Line: 1 }, { FileName: b.c, Line: 2 } ] }
    - { Symbol: w, AccessCount: 1 }
  KnownColdStrHashes: [ 3 ]
""")
        out = self.scratch.path("ab")
        memprof_profdata("merge", a, b, "-o", out, *V4)
        ba = self.scratch.path("ba")
        memprof_profdata("merge", b, a, "-o", ba, *V4)
        self.assertEqual(read(out), read(ba))
        got = strip_comments(memprof_profdata("show", out).stdout)
        self.assertEqual(got, """---
DataAccessProfiles:
  SampledRecords:
    - Symbol:          v
      AccessCount:     11
      Locations:
        - FileName:        a.c
          Line:            1
        - FileName:        b.c
          Line:            2
    - Symbol:          w
      AccessCount:     1
    - Hash:            7
      AccessCount:     1
  KnownColdSymbols:
    - c
  KnownColdStrHashes: [ 3 ]
...
""")

    # ---- refused ----------------------------------------------------------

    def refused(self, name, text, want):
        src = self.scratch.write(name, text)
        r = memprof_profdata("merge", src, "-o", self.scratch.path("x"), *V4,
                             check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(want, r.stderr)

    def test_bad_yaml_refused(self):
        cases = {
            "dup_symbol": ("SampledRecords:\n    - { Symbol: a, AccessCount: 1 }\n"
                           "    - { Symbol: a.llvm.1, AccessCount: 2 }\n",
                           "5:7: data-access record of symbol 'a' is given twice"),
            "dup_hash": ("SampledRecords: [ { AccessCount: 1 }, { Hash: 0, AccessCount: 2 } ]\n",
                         "data-access record of string literal hash 0 is given twice"),
            "empty_cold": ("KnownColdSymbols: [ '' ]\n",
                           "known-cold symbol with an empty name"),
            "no_count": ("SampledRecords: [ { Symbol: a } ]\n",
                         "a data-access record has no 'AccessCount'"),
            "separator": ('KnownColdSymbols: [ "a\\x01b" ]\n',
                          "a known-cold symbol contains a byte 0x00 or 0x01"),
            "bad_key": ("SampledRecords: [ { Symbol: a, AccessCount: 1, Size: 2 } ]\n",
                        "unknown key 'Size' in a data-access record"),
            "big_line": ("SampledRecords: [ { Symbol: a, AccessCount: 1, "
                         "Locations: [ { Line: 4294967296 } ] } ]\n",
                         "Line 4294967296 is out of range"),
        }
        for name, (dap, want) in cases.items():
            with self.subTest(name):
                self.refused(name + ".yaml", "---\nDataAccessProfiles:\n  " + dap, want)

    def test_damaged_blob_refused(self):
        ours, _ = self.merge_both("d", body("both_with_locations"))
        good = read(ours)
        memprof = struct.unpack_from("<Q", good, 0x28)[0]
        off = struct.unpack_from("<Q", good, memprof + 32)[0]
        n_strs, n_cold, blob_len = struct.unpack_from("<3Q", good, off)
        recs = off + 24 + (blob_len + 7) // 8 * 8 + 8 + 2 * 8 + 8
        bad_sym = bytearray(good)
        struct.pack_into("<Q", bad_sym, recs, 99)           # symbol index
        bad_kind = bytearray(good)
        bad_kind[recs + 8] = 2                               # IsStringLiteral
        bad_count = bytearray(good)
        struct.pack_into("<Q", bad_count, off, n_strs + 1)   # NumStrings
        bad_zlib = bytearray(good)
        bad_zlib[off + 24 + 6] ^= 0xff                       # compressed bytes
        bad_off = bytearray(good)
        struct.pack_into("<Q", bad_off, memprof + 32, 8)     # before the records
        cases = {
            "symbol index": (bad_sym, "symbol index 99 is not a string literal hash"),
            "kind": (bad_kind, "kind 2 is not a string literal hash"),
            "name count": (bad_count, "holds 9 names, the header says 8 + 2"),
            "zlib": (bad_zlib, "zlib data does not decompress"),
            "offset": (bad_off, "data-access profile offset 0x8 is not after the record table"),
            "truncated": (good[:recs + 20], "records at offset"),
        }
        for name, (data, want) in cases.items():
            with self.subTest(name):
                path = self.scratch.path(name.replace(" ", "_") + ".bin")
                with open(path, "wb") as f:
                    f.write(bytes(data))
                r = memprof_profdata("show", path, check=False)
                self.assertEqual(r.returncode, 1, r.stdout[:300])
                self.assertIn(want, r.stderr)


if __name__ == "__main__":
    harness.main()
