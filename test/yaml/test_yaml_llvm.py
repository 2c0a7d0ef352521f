"""test_yaml_llvm.py - our memprof YAML reader/writer against llvm-profdata-22.

Ground truth: `llvm-profdata-22 merge IN.yaml -o X --memprof-version=4
--memprof-full-schema` then `llvm-profdata-22 show --memory X`.  Our side is
the driver mode of the unit test binary test_yaml_io (read a YAML file with
mp_read_yaml, print mp_write_yaml).  LLVM prints records in hash-table order
and we print them in input order, so records are compared as sorted text
blocks; everything else (every byte of every record, the document header
and footer) must be equal.
"""
import os
import random
import re
import unittest

import harness
from harness import ProfTest, run

LLVM = "llvm-profdata-22"


def driver():
    return harness.find_built("test_yaml_io")


def split_doc(text):
    """(header, sorted record blocks, footer) of a HeapProfileRecords doc;
    the footer holds the DataAccessProfiles section, if any."""
    lines = text.splitlines(keepends=True)
    start = lines.index("HeapProfileRecords:\n") + 1
    end = start
    while not lines[end].startswith(("...", "DataAccessProfiles:")):
        end += 1
    blocks, cur = [], None
    for line in lines[start:end]:
        if line.startswith("  - GUID:"):
            cur = [line]
            blocks.append(cur)
        else:
            cur.append(line)
    return "".join(lines[:start]), sorted("".join(b) for b in blocks), "".join(lines[end:])


class YamlVsLlvm(ProfTest):
    def write(self, name, text):
        return self.scratch.write(name, text)

    def llvm(self, path):
        """LLVM's show --memory of the merged file, or None if merge fails."""
        out = self.scratch.path("llvm.memprofdata")
        r = run([LLVM, "merge", path, "-o", out, "--memprof-version=4",
                 "--memprof-full-schema"], check=False)
        if r.returncode != 0:
            return None
        show = run([LLVM, "show", "--memory", out]).stdout
        # drop the "# MemProfSummary" comment document, keep the records
        self.assertTrue(show.startswith("---\n# MemProfSummary:\n"), show[:200])
        return show[show.index("\n---\n") + 1:]

    def ours(self, path, symbolized=False, check=True):
        cmd = [driver(), path] + (["--symbolized"] if symbolized else [])
        return run(cmd, check=check)

    def assert_same_records(self, ours_text, llvm_text):
        oh, ob, of = split_doc(ours_text)
        lh, lb, lf = split_doc(llvm_text)
        self.assertEqual(oh, lh)
        self.assertEqual(of, lf)
        self.assertEqual(len(ob), len(lb))
        for o, l in zip(ob, lb):
            self.assertEqual(o, l)

    def check_against_llvm(self, name, text):
        path = self.write(name, text)
        want = self.llvm(path)
        self.assertIsNotNone(want, f"llvm-profdata refused {name}")
        got = self.ours(path).stdout
        self.assert_same_records(got, want)
        return got

    # ---- hand-written inputs -----------------------------------------------

    def test_records_frames_callsites_names(self):
        text = """---
HeapProfileRecords:
  - GUID: 0x7f8d88fcc70a347b
    AllocSites:
      - Callstack:
          - { Function: _Z3foov, LineOffset: 1, Column: 10, IsInlineFrame: true }
          - { Function: _Z3barv, LineOffset: 0, Column: 5, IsInlineFrame: false }
          - { Function: main, LineOffset: 4, Column: 3, IsInlineFrame: false }
        MemInfoBlock:
          AllocCount: 2
          TotalAccessCount: 100
          MinAccessCount: 10
          MaxAccessCount: 90
          TotalSize: 400
          MinSize: 100
          MaxSize: 300
          TotalLifetime: 300000
          MinLifetime: 1000
          MaxLifetime: 299000
          AllocCpuId: 3
          DeallocCpuId: 4
          NumMigratedCpu: 1
          TotalLifetimeAccessDensity: 1234
          AccessHistogramSize: 5
      - Callstack:
          - { Function: 0xABCDEF, LineOffset: 0x20, Column: 0b11, IsInlineFrame: Yes }
        MemInfoBlock: { AllocCount: 1, TotalSize: 8 }
    CallSites:
      - Frames:
          - { Function: _Z3foov, LineOffset: 2, Column: 7, IsInlineFrame: true }
          - { Function: _Z3barv, LineOffset: 1, Column: 9, IsInlineFrame: false }
        CalleeGuids: [ _Z3bazv, 0x1234 ]
      - Frames: []
  - GUID: _Z3barv
    CallSites:
      - Frames:
          - { Function: _Z3barv, LineOffset: 3, Column: 1, IsInlineFrame: false }
        CalleeGuids: [ 0x1000000, 0x1000001, 0x1000002, 0x1000003, 0x1000004, 0x1000005, 0x1000006, 0x1000007, 0x1000008, 0x1000009, 0x100000a, 0x100000b ]
  - GUID: foo.llvm.123
  - GUID: 0X1F
    AllocSites:
      - Callstack:
          - { Function: 0xffffffffffffffff, LineOffset: 4294967295, Column: 4294967295, IsInlineFrame: true }
        MemInfoBlock: {}
DataAccessProfiles:
  SampledRecords:
    - { Symbol: foo, AccessCount: 5, Locations: [ { FileName: a.c, Line: 3 } ] }
  KnownColdSymbols: [ bar ]
"""
        got = self.check_against_llvm("hand.yaml", text)
        # names became the GUIDs LLVM computes (spec 1.4 check values)
        self.assertIn("Function: 0xdb956436e78dd5fa, LineOffset: 4", got)
        self.assertIn("  - GUID:            0x5cf8c24cdb18bdac\n", got)
        # DataAccessProfiles are kept (test_data_access.py has the details)
        self.assertIn("DataAccessProfiles:\n  SampledRecords:\n    - Symbol:          foo\n", got)
        # input order is kept
        guids = re.findall(r"^  - GUID: +(\S+)$", got, re.M)
        self.assertEqual(guids[0], "0x7f8d88fcc70a347b")
        self.assertEqual(guids[3], "0x1f")

    def test_generated_profile(self):
        """80 records of random shape and values, wrapping lines included."""
        rnd = random.Random(1234)
        names = [f"_Z{n}fn{i}v" for i, n in enumerate(range(5, 25))]
        with open(os.path.join(harness.ROOT, "include", "MIBDef.inc")) as f:
            mib_names = re.findall(r"^MIB_FIELD\(\d+, (\w+),", f.read(), re.M)
        self.assertEqual(len(mib_names), 27)

        def guid():
            return rnd.choice([f"0x{rnd.getrandbits(rnd.choice([8, 32, 64])):x}",
                               rnd.choice(names)])

        def frame():
            return ("{ Function: %s, LineOffset: %d, Column: %d, IsInlineFrame: %s }"
                    % (guid(), rnd.choice([0, 1, 77, 2**32 - 1]),
                       rnd.choice([0, 3, 65535, 2**32 - 1]),
                       rnd.choice(["true", "false"])))

        out = ["---", "HeapProfileRecords:"]
        seen = set()
        for _ in range(80):
            g = f"0x{rnd.getrandbits(64):x}"
            if g in seen:
                continue
            seen.add(g)
            out.append(f"  - GUID: {g}")
            stacks = set()
            if rnd.random() < 0.8:
                out.append("    AllocSites:")
                for _ in range(rnd.randint(1, 4)):
                    st = [frame() for _ in range(rnd.randint(1, 6))]
                    if tuple(st) in stacks:
                        continue
                    stacks.add(tuple(st))
                    out.append("      - Callstack:")
                    out += [f"          - {f}" for f in st]
                    out.append("        MemInfoBlock:")
                    for n in rnd.sample(mib_names, rnd.randint(0, 27)):
                        if n == "AccessHistogram":  # a pointer in LLVM; ours is 0
                            continue
                        v = rnd.choice([0, 1, rnd.getrandbits(16), rnd.getrandbits(32)])
                        if n == "AccessHistogramSize":  # we cap it at 2^24
                            v = rnd.getrandbits(10)
                        out.append(f"          {n}: {v}")
                    if out[-1].endswith("MemInfoBlock:"):
                        out[-1] += " {}"
            if rnd.random() < 0.6:
                out.append("    CallSites:")
                for _ in range(rnd.randint(1, 3)):
                    st = [frame() for _ in range(rnd.randint(1, 3))]
                    if ("c",) + tuple(st) in stacks:
                        continue
                    stacks.add(("c",) + tuple(st))
                    out.append("      - Frames:")
                    out += [f"          - {f}" for f in st]
                    callees = sorted({guid() for _ in range(rnd.randint(0, 15))})
                    if callees:
                        out.append(f"        CalleeGuids: [ {', '.join(callees)} ]")
        got = self.check_against_llvm("gen.yaml", "\n".join(out) + "\n")
        self.assertGreater(got.count("  - GUID:"), 70)
        self.assertIn(", \n", got)  # some flow collections wrapped

    # ---- round trips -------------------------------------------------------

    def test_round_trips(self):
        """ours -> llvm merge -> llvm show == ours; ours -> ours == ours;
        LLVM's own show output (with its summary document) reads back."""
        path = self.write("in.yaml", """---
HeapProfileRecords:
  - GUID: main
    AllocSites:
      - Callstack:
          - { Function: _Z1fv, LineOffset: 3, Column: 12, IsInlineFrame: true }
          - { Function: main, LineOffset: 1, Column: 2, IsInlineFrame: false }
        MemInfoBlock: { AllocCount: 7, TotalSize: 70, TotalLifetime: 5, AccessHistogramSize: 2 }
    CallSites:
      - Frames:
          - { Function: main, LineOffset: 1, Column: 2, IsInlineFrame: false }
        CalleeGuids: [ _Z1fv ]
""")
        first = self.ours(path).stdout
        p1 = self.write("first.yaml", first)
        self.assert_same_records(first, self.llvm(p1))
        self.assertEqual(self.ours(p1).stdout, first)
        # LLVM's complete show output, summary comment document included
        out = self.scratch.path("x.memprofdata")
        run([LLVM, "merge", p1, "-o", out, "--memprof-version=4",
             "--memprof-full-schema"])
        show = self.write("show.yaml", run([LLVM, "show", "--memory", out]).stdout)
        self.assertEqual(self.ours(show).stdout, first)

    def test_llvm_reads_frame_comments(self):
        """The symbolized form (comments after frames) is plain YAML to LLVM."""
        path = self.write("in.yaml", """---
HeapProfileRecords:
  - GUID: 0x1
    CallSites:
      - Frames:
          - { Function: 0x2, LineOffset: 1, Column: 2, IsInlineFrame: false } # f a.c:3:2
""")
        self.assert_same_records(self.ours(path).stdout, self.llvm(path))

    # ---- what is accepted --------------------------------------------------

    PARITY = {
        # name: (yaml after "---\n", accepted by LLVM?)
        "decimal_guid": ("HeapProfileRecords:\n  - GUID: 123\n", False),
        "decimal_callee": ("HeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n"
                           "      - Frames: []\n        CalleeGuids: [ 12 ]\n", False),
        "name_guid_tilde": ("HeapProfileRecords:\n  - GUID: ~\n", True),
        "name_guid_null": ("HeapProfileRecords:\n  - GUID: null\n", True),
        "empty_guid": ("HeapProfileRecords:\n  - GUID:\n", False),
        "bad_hex": ("HeapProfileRecords:\n  - GUID: 0xzz\n", False),
        "hex_upper_prefix": ("HeapProfileRecords:\n  - GUID: 0X1F\n", True),
        "unknown_record_key": ("HeapProfileRecords:\n  - GUID: 0x1\n    Foo: 1\n", False),
        "unknown_top_key": ("Bar: 1\nHeapProfileRecords:\n  - GUID: 0x1\n", False),
        "missing_guid": ("HeapProfileRecords:\n  - CallSites: []\n", False),
        "dup_key": ("HeapProfileRecords:\n  - GUID: 0x1\n    GUID: 0x2\n", False),
        "bad_indent": ("HeapProfileRecords:\n  - GUID: 0x1\n   CallSites: []\n", False),
        "truncated": ("HeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n"
                      "      - Frames:\n          - { Function: 0x2, LineOffset: 1, Colu", False),
        "scalar_as_seq": ("HeapProfileRecords:\n  - GUID: 0x1\n    CallSites: 5\n", False),
        "null_lists": ("HeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n"
                       "      - Callstack: ~\n        MemInfoBlock: {}\n"
                       "    CallSites:\n      - Frames: null\n        CalleeGuids: ~\n", True),
        "null_mib": ("HeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n"
                     "      - Callstack: []\n        MemInfoBlock:\n", False),
        "unknown_mib_key": ("HeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n"
                            "      - Callstack: []\n        MemInfoBlock: { Bogus: 1 }\n", False),
        "mib_u32_truncates": ("HeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n"
                              "      - Callstack: []\n        MemInfoBlock: "
                              "{ AllocCount: 0x1FFFFFFFF, MinSize: 4294967297 }\n", True),
        "mib_u64_overflow": ("HeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n"
                             "      - Callstack: []\n        MemInfoBlock: "
                             "{ TotalSize: 18446744073709551616 }\n", False),
        "missing_mib": ("HeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n"
                        "      - Callstack: []\n", False),
        "missing_callstack": ("HeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n"
                              "      - MemInfoBlock: {}\n", False),
        "empty_record_item": ("HeapProfileRecords:\n  -\n  - GUID: 0x1\n", False),
        "alias": ("HeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - Frames:\n"
                  "          - &f { Function: 0x5, LineOffset: 1, Column: 1, IsInlineFrame: false }\n"
                  "          - *f\n", False),
        "anchor_and_tag": ("HeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - Frames:\n"
                           "          - { Function: 0x5, LineOffset: &a 5, Column: !!int 1, "
                           "IsInlineFrame: 'no' }\n", True),
        "root_sequence": ("- 1\n", False),
        "dap_null_word": ("HeapProfileRecords:\n  - GUID: 0x1\nDataAccessProfiles: ~\n", False),
        "dap_empty": ("HeapProfileRecords:\n  - GUID: 0x1\nDataAccessProfiles:\n", True),
        "later_docs_ignored": ("HeapProfileRecords:\n  - GUID: 0x1\n---\nHeapProfileRecords: [ {\n",
                               True),
        "comment_doc_first": ("# c\n---\nHeapProfileRecords:\n  - GUID: 0x2\n", True),
    }

    FRAME_VALUES = [  # (LineOffset, Column, IsInlineFrame) and LLVM's verdict
        ("4294967295", "010", "yes", True), ("0b11", "0o10", "True", True),
        ('"5"', "0x10", "on", True), ("5", "1", "Y", True), ("5", "1", "OFF", True),
        ("5", "1", "No", True), ("0xFFFFFFFF", "1", "FALSE", True),
        ("0O7", "1", "n", False), ("08", "1", "n", False), ("+5", "1", "n", False),
        ("abc", "1", "n", False), ("-0", "1", "n", False), ("1e3", "1", "n", False),
        ("4294967296", "1", "n", False), ("0x100000000", "1", "n", False),
        ("0x", "1", "n", False), ("1", "1", "oN", False), ("1", "1", "1", False),
        ("1", "1", "tRUE", False), ("1", "1", "~", False), ("1", "1", "null", False),
    ]

    def check_parity(self, name, body, llvm_ok):
        path = self.write(name + ".yaml", "---\n" + body)
        want = self.llvm(path)
        self.assertEqual(want is not None, llvm_ok,
                         f"{name}: llvm-profdata's verdict changed")
        r = self.ours(path, check=False)
        if llvm_ok:
            self.assertEqual(r.returncode, 0, f"{name}: we refused: {r.stderr}")
            self.assert_same_records(r.stdout, want)
        else:
            self.assertEqual(r.returncode, 1, f"{name}: we accepted or crashed")
            # "path: line:col: reason", one line
            self.assertRegex(r.stderr, r"^" + re.escape(path) + r": \d+:\d+: \S.*\n$")

    def test_accept_reject_like_llvm(self):
        for name, (body, ok) in self.PARITY.items():
            with self.subTest(name):
                self.check_parity(name, body, ok)

    def test_frame_scalars_like_llvm(self):
        for i, (line, col, inl, ok) in enumerate(self.FRAME_VALUES):
            body = ("HeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - Frames:\n"
                    f"          - {{ Function: 0x2, LineOffset: {line}, Column: {col}, "
                    f"IsInlineFrame: {inl} }}\n")
            with self.subTest(f"{line} {col} {inl}"):
                self.check_parity(f"frame{i}", body, ok)

    def test_error_messages(self):
        cases = [
            ("HeapProfileRecords:\n  - GUID: 0x1\n    Foo: 1\n",
             "4:5: unknown key 'Foo' in a heap profile record"),
            ("HeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - Frames:\n"
             "          - { Function: 0x2, LineOffset: x1, Column: 3, IsInlineFrame: false }\n",
             "6:42: LineOffset 'x1' is not a valid unsigned number"),
            ("HeapProfileRecords:\n  - GUID: 42\n",
             "3:11: GUID '42': use a hexadecimal GUID (0x...) or a function name"),
            ("HeapProfileRecords:\n  - GUID: 0x1\n   CallSites: []\n",
             "4:4: did not find expected '-' indicator"),
        ]
        for i, (body, want) in enumerate(cases):
            path = self.write(f"err{i}.yaml", "---\n" + body)
            r = self.ours(path, check=False)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stdout, "")
            self.assertIn(f"{path}: {want}", r.stderr)

    def test_documented_model_differences(self):
        """Duplicates: LLVM keeps the first record / every site; our model
        merges records by GUID, alloc sites by context (MIB merge rules) and
        deduplicates callee GUIDs."""
        path = self.write("dup.yaml", """---
HeapProfileRecords:
  - GUID: 0x1
    AllocSites:
      - Callstack: []
        MemInfoBlock: { AllocCount: 2, TotalSize: 5, MinSize: 3 }
      - Callstack: []
        MemInfoBlock: { AllocCount: 7, TotalSize: 1, MinSize: 2 }
    CallSites:
      - Frames: []
        CalleeGuids: [ 0x6, 0x5, 0x5 ]
  - GUID: 0x1
    CallSites:
      - Frames: []
        CalleeGuids: [ 0x7 ]
""")
        got = self.ours(path).stdout
        self.assertEqual(got.count("  - GUID:"), 1)
        self.assertEqual(got.count("Callstack:"), 1)
        self.assertIn("AllocCount:      9\n", got)
        self.assertIn("TotalSize:       6\n", got)
        self.assertIn("MinSize:         2\n", got)
        self.assertIn("CalleeGuids:     [ 0x6, 0x5, 0x7 ]\n", got)


if __name__ == "__main__":
    harness.main()
