"""test_indexed_llvm.py - our indexed writer and reader against LLVM's tools.

Ground truth is llvm-profdata-22 (and -19, clang-22/-19).  Profiles are made
from YAML (docs/indexed-format.md), so no runtime is needed.  The
reader/writer are driven through build product test_indexed_conv
(test/unit/profdata/test_indexed_conv.c) until the CLI exists.

Asserts:
 (a) `llvm-profdata-22 show --memory` of our file prints exactly the text it
     prints for llvm-profdata-22's own file of the same content, for every
     memprof version 2/3/4 x hot-cold/full schema x index version 11/12/13
     LLVM can read, with and without our symbolized section; memprof v4 with
     index 11 is refused; for index 11 and 13 without the section our file
     is byte-identical to llvm-profdata's;
 (b) llvm-profdata-19 shows and merges our default file (index 12, memprof
     v3), with the same merge output as for LLVM's own index-11 file;
 (c) our reader recovers from llvm-profdata-22's files exactly the records,
     frames, stacks, schema MIB fields (others 0) and v4 CalleeGuids;
 (e) damaged files (truncated at every 8 bytes, bad offsets) are refused
     with a message, never a crash;
 (f) clang-22 (and clang-19 for index 12/v3) compile a program with our
     file, with and without the symbolized section, to exactly the IR they
     produce with llvm-profdata's file, and that IR carries memprof hints.
"""
import os
import random
import struct
import unittest

import harness
from harness import run, Scratch, parse_memprof_yaml, llvm_guid

FIELDS = ["AllocCount", "TotalAccessCount", "MinAccessCount", "MaxAccessCount",
          "TotalSize", "MinSize", "MaxSize", "AllocTimestamp", "DeallocTimestamp",
          "TotalLifetime", "MinLifetime", "MaxLifetime", "AllocCpuId",
          "DeallocCpuId", "NumMigratedCpu", "NumLifetimeOverlaps",
          "NumSameAllocCpu", "NumSameDeallocCpu", "DataTypeId",
          "TotalAccessDensity", "MinAccessDensity", "MaxAccessDensity",
          "TotalLifetimeAccessDensity", "MinLifetimeAccessDensity",
          "MaxLifetimeAccessDensity", "AccessHistogramSize", "AccessHistogram"]
U64 = {"TotalAccessCount", "MinAccessCount", "MaxAccessCount", "TotalSize",
       "TotalLifetime", "DataTypeId", "TotalAccessDensity",
       "TotalLifetimeAccessDensity"}
HOT_COLD = ["AllocCount", "TotalSize", "TotalLifetime", "TotalLifetimeAccessDensity"]


def read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()


def conv(*args, check=True):
    return run([harness.find_built("test_indexed_conv"), *map(str, args)],
               check=check)


def frame_yaml(f):
    g, lo, col, inl = f
    return (f"{{ Function: {g:#x}, LineOffset: {lo}, Column: {col}, "
            f"IsInlineFrame: {'true' if inl else 'false'} }}")


def random_yaml(seed, n_records=40):
    """Records with shared stack roots, inline frames, cold and warm MIBs
    with every field set (histograms empty), and call sites with callees."""
    rnd = random.Random(seed)
    funcs = [rnd.getrandbits(64) | 1 for _ in range(15)]
    frames = [(rnd.choice(funcs), rnd.randrange(60), rnd.randrange(90),
               rnd.random() < 0.3) for _ in range(50)]
    out = ["---", "HeapProfileRecords:"]
    guids = rnd.sample(funcs * 3 + [rnd.getrandbits(64) for _ in range(40)],
                       n_records)
    for g in dict.fromkeys(guids):
        out.append(f"  - GUID: {g:#x}")
        seen = set()

        def stack():
            n = rnd.randrange(1, 12)
            st = [frames[rnd.randrange(3)] if i < 2 else rnd.choice(frames)
                  for i in range(n)]
            return tuple(reversed(st))
        allocs = [s for s in (stack() for _ in range(rnd.randrange(4)))
                  if not (s in seen or seen.add(s))]
        seen = set()
        calls = [s for s in (stack() for _ in range(rnd.randrange(3)))
                 if not (s in seen or seen.add(s))]
        if allocs:
            out.append("    AllocSites:")
        for st in allocs:
            out.append("      - Callstack:")
            out += [f"          - {frame_yaml(f)}" for f in st]
            out.append("        MemInfoBlock:")
            cold = rnd.random() < 0.4
            for name in FIELDS[:-2]:
                v = rnd.getrandbits(64 if name in U64 else 32)
                if name == "AllocCount":
                    v = rnd.randrange(1, 50)
                if cold and name == "TotalLifetime":
                    v = 10**9
                if cold and name == "TotalLifetimeAccessDensity":
                    v = 0
                out.append(f"          {name}: {v}")
        if calls:
            out.append("    CallSites:")
        for st in calls:
            out.append("      - Frames:")
            out += [f"          - {frame_yaml(f)}" for f in st]
            if rnd.random() < 0.6:
                cg = ", ".join(f"{rnd.getrandbits(64):#x}"
                               for _ in range(rnd.randrange(1, 4)))
                out.append(f"        CalleeGuids: [ {cg} ]")
    return "\n".join(out) + "\n"


def llvm_flags(mv, full, prev=False):
    f = [f"--memprof-version={mv}"]
    if full:
        f.append("--memprof-full-schema")
    if prev:
        f.append("--write-prev-version")
    return f


def show22(path):
    return run(["llvm-profdata-22", "show", "--memory", path]).stdout


def callee_guids(text):
    """[(record guid, [callee guids])] in document order."""
    res, guid = [], None
    for line in text.splitlines():
        s = line.split(" #", 1)[0].strip()
        if s.startswith("- GUID:"):
            guid = int(s.split(":")[1], 16)
        elif s.startswith("CalleeGuids:"):
            inner = s.split("[", 1)[1].rsplit("]", 1)[0]
            res.append((guid, [int(x, 16) for x in inner.split(",") if x.strip()]))
    return res


class IndexedVsLLVM(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Scratch("indexed")
        cls.yaml = cls.s.write("in.yaml", random_yaml(7))
        # cls.src: LLVM's file from the YAML (what we read).  cls.shown: what
        # LLVM shows for its file made from show(src), whose record
        # insertion order is src's hash-table order - the order in which we
        # insert records when reading src - so even hash chains agree.
        cls.src, cls.src_shown, cls.shown, cls.ref = {}, {}, {}, {}
        for mv in (2, 3, 4):
            for full in (0, 1):
                first = cls.s.path(f"first.v{mv}.{full}")
                run(["llvm-profdata-22", "merge", cls.yaml, "-o", first,
                     *llvm_flags(mv, full)])
                cls.src[mv, full] = first
                cls.src_shown[mv, full] = show22(first)
                text = cls.s.write(f"first.v{mv}.{full}.yaml",
                                   cls.src_shown[mv, full])
                ref = cls.s.path(f"ref.v{mv}.{full}")
                run(["llvm-profdata-22", "merge", text, "-o", ref,
                     *llvm_flags(mv, full)])
                cls.shown[mv, full] = show22(ref)
                cls.ref[mv, full, 13] = ref
                if mv != 4:
                    ref11 = cls.s.path(f"ref11.v{mv}.{full}")
                    run(["llvm-profdata-22", "merge", text, "-o", ref11,
                         *llvm_flags(mv, full, prev=True)])
                    cls.ref[mv, full, 11] = ref11

    @classmethod
    def tearDownClass(cls):
        cls.s.cleanup()

    def test_a_show_matches_llvm(self):
        for (mv, full), ref in self.src.items():
            for iv in (11, 12, 13):
                for sym in (0, 1):
                    with self.subTest(memprof=mv, full=full, index=iv, sym=sym):
                        out = self.s.path(f"ours.{mv}.{full}.{iv}.{sym}")
                        args = ["write", ref, out, iv, mv, full, sym]
                        if sym:
                            args.append("addsyms")
                        r = conv(*args, check=False)
                        if mv == 4 and iv == 11:
                            self.assertNotEqual(r.returncode, 0)
                            self.assertIn("memprof version 4 needs", r.stderr)
                            continue
                        self.assertEqual(r.returncode, 0, r.stderr)
                        data = read(out)
                        ver = struct.unpack_from("<Q", data, 8)[0]
                        self.assertEqual(ver, (1 << 62) | iv)
                        self.assertEqual(data[-40:-32] == b"MPSYMSEC", bool(sym))
                        self.assertEqual(show22(out), self.shown[mv, full])
                        if (mv, full, iv) in self.ref and not sym:
                            # BLAKE3 ids + LLVM's table order: same bytes
                            self.assertEqual(data, read(self.ref[mv, full, iv]))

    def test_b_llvm19_reads_default(self):
        ref = self.src[3, 0]
        prev = self.s.path("ref.prev")
        run(["llvm-profdata-22", "merge", self.yaml, "-o", prev,
             *llvm_flags(3, 0, prev=True)])
        merged = {}
        for name, sym in (("plain", 0), ("sym", 1)):
            out = self.s.path(f"ours19.{name}")
            conv("write", ref, out, 12, 3, 0, sym, *(["addsyms"] if sym else []))
            run(["llvm-profdata-19", "show", out])
            m = self.s.path(f"m19.{name}")
            run(["llvm-profdata-19", "merge", out, "-o", m])
            merged[name] = read(m)
        m = self.s.path("m19.llvm")
        run(["llvm-profdata-19", "merge", prev, "-o", m])
        self.assertEqual(merged["plain"], read(m))
        self.assertEqual(merged["sym"], merged["plain"])

    def test_c_reader_recovers_llvm_files(self):
        for (mv, full), ref in self.src.items():
            with self.subTest(memprof=mv, full=full):
                ours = conv("dump", ref).stdout
                want = parse_memprof_yaml(self.src_shown[mv, full])
                got = parse_memprof_yaml(ours)
                self.assertEqual(set(got), set(want))
                schema = FIELDS if full else HOT_COLD
                for g, rec in want.items():
                    self.assertEqual(got[g]["calls"], rec["calls"])
                    self.assertEqual([s for s, _ in got[g]["allocs"]],
                                     [s for s, _ in rec["allocs"]])
                    for (_, gm), (_, wm) in zip(got[g]["allocs"], rec["allocs"]):
                        self.assertEqual({k: gm[k] for k in schema}, wm)
                        self.assertTrue(all(gm[k] == 0 for k in FIELDS
                                            if k not in schema))
                want_cg = callee_guids(self.src_shown[mv, full]) if mv == 4 else []
                self.assertEqual(sorted(callee_guids(ours)), sorted(want_cg))
                if mv == 4:
                    self.assertTrue(want_cg)

    def test_c_v4_data_access_blob_ignored(self):
        text = read(self.yaml, "r") + "\n".join([
            "DataAccessProfiles:", "  SampledRecords:", "    - Symbol: foo",
            "      AccessCount: 3", "      Locations:",
            "        - FileName: a.cc", "          Line: 4",
            "  KnownColdSymbols: [ bar ]", "  KnownColdStrHashes: [ 123 ]"]) + "\n"
        yml = self.s.write("dap.yaml", text)
        f = self.s.path("dap.v4")
        run(["llvm-profdata-22", "merge", yml, "-o", f, "--memprof-version=4"])
        data = read(f)
        mo = struct.unpack_from("<Q", data, 0x28)[0]
        self.assertNotEqual(struct.unpack_from("<Q", data, mo + 32)[0], 0)
        got = parse_memprof_yaml(conv("dump", f).stdout)
        for r in got.values():
            r["allocs"] = [(st, {k: m[k] for k in HOT_COLD}) for st, m in r["allocs"]]
        self.assertEqual(got, parse_memprof_yaml(self.src_shown[4, 0]))

    def test_e_damaged_files_refused(self):
        ref = self.src[3, 0]
        data = read(ref)
        bad = self.s.path("bad")
        for cut in range(0, len(data), 8):
            with open(bad, "wb") as f:
                f.write(data[:cut])
            r = conv("check", bad, check=False)
            self.assertIn(r.returncode, (0, 1), f"cut {cut}: {r.stderr}")
            if cut < 0x48:
                self.assertEqual(r.returncode, 1)
            if r.returncode:
                self.assertTrue(r.stderr.strip(), f"cut {cut}")
        # memprof offset, record table offset, schema count, radix entry
        mo = struct.unpack_from("<Q", data, 0x28)[0]
        # what we damage -> (where, bytes, words the message must contain)
        cases = {
            "memprof offset": (0x28, struct.pack("<Q", len(data) + 8),
                               "memprof section offset"),
            "record table": (mo + 24, struct.pack("<Q", 3), "record table"),
            "schema count": (mo + 32, struct.pack("<Q", 29), "29 fields"),
            "schema tag": (mo + 40, struct.pack("<Q", 0), "field tag 0"),
            "radix length": (struct.unpack_from("<Q", data, mo + 8)[0],
                             struct.pack("<I", 0xfffffff0), "exceeds the radix"),
        }
        for what, (off, b, msg) in cases.items():
            with self.subTest(what=what):
                d = bytearray(data)
                d[off:off + len(b)] = b
                with open(bad, "wb") as f:
                    f.write(d)
                r = conv("check", bad, check=False)
                self.assertEqual(r.returncode, 1, what)
                self.assertIn(msg, r.stderr)


PROGRAM = "cold_context.cc"  # in progs/


def program_yaml():
    """alloc calls new at @new; main calls alloc at @cold (cold context)
    and @warm (not cold); line offsets from the markers.  Columns are all
    0, so clang matches on lines only."""
    marks = harness.marked_sites(harness.prog_text(__file__, PROGRAM))
    a, m = llvm_guid("_Z5allocm"), llvm_guid("main")
    cold_line, warm_line = marks["cold"][1], marks["warm"][1]
    leaf = (a, marks["new"][1], 0, False)
    cold = "{ AllocCount: 1, TotalSize: 10, TotalLifetime: 500000, TotalLifetimeAccessDensity: 0 }"
    warm = "{ AllocCount: 1, TotalSize: 21, TotalLifetime: 1, TotalLifetimeAccessDensity: 900000 }"
    return "\n".join([
        "---", "HeapProfileRecords:",
        f"  - GUID: {a:#x}", "    AllocSites:",
        "      - Callstack:", f"          - {frame_yaml(leaf)}",
        f"          - {frame_yaml((m, cold_line, 0, False))}",
        f"        MemInfoBlock: {cold}",
        "      - Callstack:", f"          - {frame_yaml(leaf)}",
        f"          - {frame_yaml((m, warm_line, 0, False))}",
        f"        MemInfoBlock: {warm}",
        f"  - GUID: {m:#x}", "    CallSites:",
        "      - Frames:", f"          - {frame_yaml((m, cold_line, 0, False))}",
        "      - Frames:", f"          - {frame_yaml((m, warm_line, 0, False))}",
    ]) + "\n"


class ClangReadsOurFiles(unittest.TestCase):
    def test_f_ir_identical(self):
        s = Scratch("indexed-clang")
        try:
            src = harness.prog_path(__file__, PROGRAM)
            yml = s.write("p.yaml", program_yaml())
            for llvm, mv, iv in ((22, 3, 13), (22, 4, 12), (22, 2, 11),
                                 (19, 3, 12), (19, 2, 12)):
                with self.subTest(clang=llvm, memprof=mv, index=iv):
                    ref = s.path(f"llvm.{mv}")
                    run(["llvm-profdata-22", "merge", yml, "-o", ref,
                         *llvm_flags(mv, 0, prev=llvm == 19)])
                    want = harness.use_ir(s, src, ref, "ref.ll", llvm=llvm)
                    self.assertIn("!memprof", want)
                    # clang-19 has no "ambiguous" attribute (spec section 7.3)
                    if llvm == 22:
                        self.assertIn('"memprof"="ambiguous"', want)
                    for sym in (0, 1):
                        out = s.path(f"ours.{mv}.{iv}.{sym}")
                        conv("write", ref, out, iv, mv, 0, sym,
                             *(["addsyms"] if sym else []))
                        got = harness.use_ir(s, src, out, f"o{sym}.ll", llvm=llvm)
                        self.assertEqual(got, want)
        finally:
            s.cleanup()


if __name__ == "__main__":
    harness.main()
