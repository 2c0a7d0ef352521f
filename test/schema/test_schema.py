"""The MIB schema (include/MIBDef.inc) equals LLVM's, field for field.

Compares tag, name and C type with the installed LLVM 22 and 19
MIBEntryDef.inc, and the packed offsets our compiler computes for mpf_mib
(progs/mib_offsets.c) with offsets derived from LLVM's field widths.
"""
import os
import re

import harness

LLVM_INC = "/usr/include/llvm-{v}/llvm/ProfileData/MIBEntryDef.inc"
WIDTH = {"uint32_t": 4, "uint64_t": 8, "uintptr_t": 8}


def llvm_fields(version):
    text = open(LLVM_INC.format(v=version)).read()
    return [(int(t), n, ty) for _, t, n, ty in re.findall(
        r"^MIBEntryDef\((\w+) = (\d+), (\w+), (\w+)\)", text, re.M)]


def our_fields():
    text = open(os.path.join(harness.ROOT, "include", "MIBDef.inc")).read()
    return [(int(t), n, ty) for t, n, ty in re.findall(
        r"^MIB_FIELD\((\d+), (\w+), (\w+), \w+\)", text, re.M)]


class SchemaTest(harness.ProfTest):
    def test_fields_match_llvm22_and_19(self):
        ours = our_fields()
        self.assertEqual(len(ours), 27)
        for v in (22, 19):
            theirs = llvm_fields(v)
            self.assertEqual([(t, n) for t, n, _ in ours], [(t, n) for t, n, _ in theirs])
            self.assertEqual([WIDTH[ty] for _, _, ty in ours],
                             [WIDTH[ty] for _, _, ty in theirs])

    def test_packed_offsets(self):
        src = harness.prog_path(__file__, "mib_offsets.c")
        exe = self.scratch.path("offsets")
        harness.run(["cc", "-std=c11", "-I", harness.ROOT, src, "-o", exe])
        lines = harness.run([exe]).stdout.split("\n")
        off = 0
        for (tag, name, ty), line in zip(llvm_fields(22), lines):
            self.assertEqual(line, f"{tag} {name} {off} {WIDTH[ty]}")
            off += WIDTH[ty]
        self.assertEqual(off, 144)
        self.assertIn("sizes 48 64 144", lines)
        # raw v3 ends before AccessHistogramSize
        self.assertIn("26 AccessHistogramSize 132 4", lines)

    def test_raw_magic_and_versions_match_llvm(self):
        text = open("/usr/include/llvm-22/llvm/ProfileData/MemProfData.inc").read()
        fmt = open(os.path.join(harness.ROOT, "include", "internal", "memprof_format.h")).read()
        m = re.search(r"#define MEMPROF_RAW_VERSION (\d+)ULL", text)
        self.assertIsNotNone(m)
        self.assertEqual(int(m.group(1)), 5)
        self.assertIn("#define MPF_RAW_VERSION_DEFAULT 5u", fmt)
        # LLVM builds the magic from the bytes 255, 'm', 'p', 'r', 'o', 'f', 'r', 129
        magic = (255 << 56) | (ord('m') << 48) | (ord('p') << 40) | (ord('r') << 32) | \
                (ord('o') << 24) | (ord('f') << 16) | (ord('r') << 8) | 129
        self.assertIn(f"#define MPF_RAW_MAGIC {magic:#018x}ULL", fmt)


if __name__ == "__main__":
    harness.main()
