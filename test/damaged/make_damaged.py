#!/usr/bin/env python3
"""make_damaged.py - derive the damaged-profile corpus from real files.

    make_damaged.py [OUTDIR [CASES]]   (default: files/ and cases.txt next
                                        to this script)

Inputs, next to this script: base-v5.profraw and base-v3.profraw (raw
profiles of test/fuzz/seedprog.c, recorded with LLVM 22's runtime; v3 is
the LLVM 19 v4 file converted), base-llvm22.indexed (llvm-profdata-22 merge
of base-v5) and base.yaml (llvm-profdata-22 show --memory of base-llvm22.indexed) and
base-ours.memprofdata (memprof-profdata merge of base-v5, with our
symbolized section), base-ir22.profraw (test/fuzz/instrprog.c's
instrumentation profile from clang-22 -fprofile-generate, instrprog.py) and
base-ir22.indexed (llvm-profdata-22 merge of it), base-dap-llvm22.indexed
(llvm-profdata-22 merge --memprof-version=4 of base-dap.yaml, which has a
data-access profile).

Writes one file per case into OUTDIR and the list of cases to CASES:
one line per case, tab-separated: file name, the substring memprof-profdata's
error message must contain, the exit status.  The messages are pdraw's and
pdidx's wording (profdata/raw/raw.c, raw_build.c, indexed_read.c,
memprof_read.c, radix.c, odhash.c, yaml_read.c, instrprof_raw.c,
instrprof_index.c, instrprof_values.c) with concrete offsets, so a
message that loses its offset or its numbers fails the test.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NOT_A_PROFILE = ("not a profile (neither a raw memory or instrumentation profile, "
                 "an indexed profile nor YAML")


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def put64(b, o, v):
    b = bytearray(b)
    struct.pack_into("<Q", b, o, v & (2**64 - 1))
    return bytes(b)


def put32(b, o, v):
    b = bytearray(b)
    struct.pack_into("<I", b, o, v & (2**32 - 1))
    return bytes(b)


# ---- raw ------------------------------------------------------------------

class Raw:
    """Section offsets of a one-dump raw file."""

    def __init__(self, data):
        self.d = data
        (_, self.version, self.total, self.seg, self.mib,
         self.stk) = struct.unpack_from("<6Q", data, 0)
        self.nseg = u64(data, self.seg)
        self.nmib = u64(data, self.mib)
        self.nstk = u64(data, self.stk)
        self.mib_fixed = 8 + (132 if self.version == 3 else 144)
        self.stack_entries = []  # (offset, id, k)
        p = self.stk + 8
        for _ in range(self.nstk):
            sid, k = struct.unpack_from("<2Q", data, p)
            self.stack_entries.append((p, sid, k))
            p += 16 + 8 * k


def raw_cases(v5, v3):
    r = Raw(v5)
    n = len(v5)
    c = []
    add = lambda name, data, msg: c.append((name, data, msg))

    add("raw-empty.profraw", b"", NOT_A_PROFILE)
    add("raw-magic-half.profraw", v5[:4], NOT_A_PROFILE)
    add("raw-bad-magic.profraw", b"\x80" + v5[1:], NOT_A_PROFILE)
    for cut in (8, 47):
        add(f"raw-trunc-{cut}.profraw", v5[:cut],
            f"truncated dump header at offset 0x0: needs 48 bytes, {cut} remain")
    # Every section boundary, and one byte short of the end.
    for cut in (48, r.seg + 8, r.mib, r.mib + 8, r.stk, r.stk + 8, n - 1):
        add(f"raw-trunc-{cut}.profraw", v5[:cut],
            f"dump at offset 0x0: TotalSize {r.total} does not fit the {cut} "
            "bytes left in the file (truncated file?)")
    # Truncated inside the stack table with TotalSize made to agree.
    cut = r.stk + 8 + 16 + 8
    p0, id0, k0 = r.stack_entries[0]
    add("raw-trunc-in-stack-consistent.profraw",
        put64(put64(v5[:cut], 16, cut), r.stk, 1),
        f"stack 0 (id 0x{id0:016x}) at offset 0x{p0:x}: {k0} PCs do not fit in "
        f"the 8 bytes left in the dump")
    for v in (2, 6, 2**64 - 1):
        add(f"raw-version-{v}.profraw", put64(v5, 8, v),
            f"unsupported raw profile version {v} in dump at offset 0x0 "
            "(supported: 3, 4, 5)")
    for name, tot in (("0", 0), ("huge", 2**63)):
        add(f"raw-totalsize-{name}.profraw", put64(v5, 16, tot),
            f"dump at offset 0x0: TotalSize {tot} does not fit the {n} bytes left")
    order = "section offsets out of order or outside the dump"
    add("raw-segoff-past-end.profraw", put64(v5, 24, 0x10000), order)
    add("raw-miboff-past-end.profraw", put64(v5, 32, n + 8), order)
    add("raw-stackoff-past-end.profraw", put64(v5, 40, 2**64 - 8), order)
    add("raw-overlap-stack-on-mib.profraw", put64(v5, 40, r.mib), order)
    add("raw-overlap-mib-before-seg.profraw", put64(v5, 32, 16), order)
    # MIB table starting inside the segment table.
    mib_in = r.seg + 8 + 64 * 3
    add("raw-overlap-mib-in-segments.profraw", put64(v5, 32, mib_in),
        f"segment table at offset 0x{r.seg:x}: {r.nseg} entries of 64 bytes do "
        f"not fit in the {mib_in - r.seg - 8} bytes before the MIB table")
    # Stack table starting inside the MIB table.
    stk_in = r.mib + 8 + 2 * (r.mib_fixed)
    add("raw-overlap-stack-in-mibs.profraw", put64(v5, 40, stk_in),
        f"MIB table at offset 0x{r.mib:x}: {r.nmib} entries cannot fit in the "
        f"{stk_in - r.mib - 8} bytes before the stack table (at least "
        f"{r.mib_fixed} bytes each)")
    add("raw-seg-count-huge.profraw", put64(v5, r.seg, 2**40),
        f"segment table at offset 0x{r.seg:x}: {2**40} entries of 64 bytes do "
        f"not fit in the {r.mib - r.seg - 8} bytes before the MIB table")
    add("raw-mib-count-huge.profraw", put64(v5, r.mib, 2**64 - 1),
        f"MIB table at offset 0x{r.mib:x}: {2**64 - 1} entries cannot fit")
    add("raw-stack-count-huge.profraw", put64(v5, r.stk, 2**62),
        f"stack table at offset 0x{r.stk:x}: {2**62} entries cannot fit in the "
        f"{r.total - r.stk - 8} bytes left in the dump")
    add("raw-pc-count-huge.profraw", put64(v5, p0 + 8, 2**61),
        f"stack 0 (id 0x{id0:016x}) at offset 0x{p0:x}: {2**61} PCs do not fit")
    hs_at = r.mib + 8 + 8 + 132
    add("raw-histogram-huge.profraw", put32(v5, hs_at, 0xffffffff),
        f"MIB 0 at offset 0x{r.mib + 8:x}: AccessHistogramSize 4294967295 is larger "
        f"than 16777216")
    seg0 = r.seg + 8
    add("raw-buildid-size-33.profraw", put64(v5, seg0 + 24, 33),
        f"segment 0 at offset 0x{seg0:x}: BuildIdSize 33 exceeds 32")
    start = u64(v5, seg0)
    add("raw-segment-start-above-end.profraw", put64(v5, seg0 + 8, start - 1),
        f"segment 0 at offset 0x{seg0:x}: Start 0x{start:x} is above End "
        f"0x{start - 1:x}")
    # A stack id listed twice with different PCs, in one dump and across two.
    p2 = r.stack_entries[2][0]
    add("raw-stack-id-repeated.profraw", put64(v5, p2, id0),
        f"stack at offset 0x{p2:x}: got different call stack for same id "
        f"0x{id0:016x} (first seen at offset 0x{p0:x})")
    second = put64(v5, p0 + 16 + 8, u64(v5, p0 + 16 + 8) + 8)
    add("raw-2dumps-stack-differs.profraw", v5 + second,
        f"stack at offset 0x{n + p0:x}: got different call stack for same id "
        f"0x{id0:016x} (first seen at offset 0x{p0:x})")
    add("raw-mib-unknown-stack.profraw", put64(v5, r.mib + 8, 0x63),
        f"MIB 0 at offset 0x{r.mib + 8:x}: stack id 0x{0x63:016x} is in no "
        "stack table")
    bid = bytearray(v5)
    for i in range(seg0 + 32, seg0 + 32 + 20):
        bid[i] ^= 0xff
    add("raw-buildid-matches-no-binary.profraw", bytes(bid),
        "no profiled binary matches the profile; its segments have build ids "
        + bytes(bid[seg0 + 32:seg0 + 52]).hex())
    nopc = bytearray(v5)
    for p, _, k in r.stack_entries:
        nopc[p + 16:p + 16 + 8 * k] = bytes(8 * k)
    add("raw-no-symbolizable-pc.profraw", bytes(nopc),
        f"none of the {r.nmib} allocation contexts has a symbolizable frame")
    add("raw-trailing-garbage.profraw", v5 + b"\1" * 5,
        f"truncated dump header at offset 0x{n:x}: needs 48 bytes, 5 remain")
    add("raw-second-dump-bad-magic.profraw", v5 + bytes(48),
        f"bad magic 0x0000000000000000 at offset 0x{n:x}")
    # A v3 file claiming v4: its 140-byte MIB entries read as 152.
    r3 = Raw(v3)
    add("raw-v3-claims-v4.profraw", put64(v3, 8, 4),
        f"MIB table at offset 0x{r3.mib:x}: {r3.nmib} entries cannot fit in the "
        f"{r3.stk - r3.mib - 8} bytes before the stack table (at least 152 "
        "bytes each)")
    return c


# ---- indexed ----------------------------------------------------------------

class Indexed:
    """Offsets in an llvm-profdata-22 indexed file (memprof v3)."""

    def __init__(self, d):
        self.d = d
        self.version = u64(d, 8) & 0xffffffff
        self.mp = u64(d, 40)
        assert u64(d, self.mp) == 3, "base must carry memprof v3"
        self.cspo, self.rpo, self.rto = (u64(d, self.mp + 8 * i) for i in (1, 2, 3))
        self.schema_at = self.mp + 32
        nschema = u64(d, self.schema_at)
        self.frames_at = self.schema_at + 8 + 8 * nschema
        self.nframes = (self.cspo - self.frames_at) // 17
        self.nradix = (self.rpo - self.cspo) // 4
        self.first_alloc = self.find_first_alloc(nschema)

    def find_first_alloc(self, nschema):
        """(offset of the u32 call stack id, its value, offset of the alloc
        count) of the first record with an alloc site, walking the payload
        in order (u16 bucket count; per item u64 hash, u64 key length, u64
        data length, key, data)."""
        d = self.d
        schema = [u64(d, self.schema_at + 8 + 8 * i) for i in range(nschema)]
        mib = sum(4 if t in (1, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 21,
                             22, 24, 25, 26) else 8 for t in schema)
        assert mib
        p = self.rpo
        while p < self.rto:
            n = struct.unpack_from("<H", d, p)[0]
            p += 2
            for _ in range(n):
                kl, dl = u64(d, p + 8), u64(d, p + 16)
                data = p + 24 + kl
                if u64(d, data) > 0:
                    return data + 8, u32(d, data + 8), data
                p = data + dl
        raise AssertionError("no alloc site")


def indexed_cases(ix):
    d = ix.d
    n = len(d)
    c = []
    add = lambda name, data, msg: c.append((name, data, msg))
    hw = 9 if ix.version >= 12 else 8
    add("idx-bad-magic.indexed", b"\0" + d[1:], NOT_A_PROFILE)
    add("idx-trunc-8.indexed", d[:8], "truncated indexed header")
    add("idx-trunc-40.indexed", d[:40],
        f"truncated indexed header: version {ix.version} needs {8 * hw} bytes, "
        "file has 40")
    add(f"idx-trunc-{ix.mp}.indexed", d[:ix.mp],
        f"memprof section offset 0x{ix.mp:x} is outside the file (header ends "
        f"at 0x{8 * hw:x}, size 0x{ix.mp:x})")
    cut = ix.mp + 16
    add(f"idx-trunc-{cut}.indexed", d[:cut],
        f"truncated memprof header: needs 32 bytes at offset 0x{ix.mp:x}, file "
        f"has 0x{cut:x}")
    order = f"memprof v3 header at offset 0x{ix.mp:x}: offsets out of order or outside the file"
    for cut in (ix.frames_at + 20, ix.cspo + 8, ix.rpo + 10, ix.rto - 1):
        add(f"idx-trunc-{cut}.indexed", d[:cut], order)
    # llvm-profdata-22 refuses this one ("truncated profile data").
    vt = u64(d, 0x40)
    add(f"idx-trunc-{n - 1}.indexed", d[:n - 1],
        f"truncated profile data: vtable-names section at offset 0x{vt:x} needs 8 "
        f"bytes, the file has 0x{n - 1:x}")
    for v in (7, 14):
        add(f"idx-version-{v}.indexed", put64(d, 8, (u64(d, 8) & ~0xffffffff) | v),
            f"indexed profile version {v} is not supported (8..13 carry a "
            "memory profile)")
    add("idx-memprof-offset-past-end.indexed", put64(d, 40, n + 64),
        f"memprof section offset 0x{n + 64:x} is outside the file")
    add("idx-memprof-version-5.indexed", put64(d, ix.mp, 5),
        f"memprof section at offset 0x{ix.mp:x} has version 5 (2, 3 and 4 are "
        "supported)")
    add("idx-schema-huge.indexed", put64(d, ix.schema_at, 2**32),
        f"memprof schema at offset 0x{ix.schema_at:x} has {2**32} fields")
    add("idx-schema-bad-tag.indexed", put64(d, ix.schema_at + 8, 99),
        f"memprof schema at offset 0x{ix.schema_at:x}: field tag 99 is not a "
        "MemInfoBlock field")
    swapped = put64(put64(d, ix.mp + 8, ix.rpo), ix.mp + 16, ix.cspo)
    add("idx-offsets-out-of-order.indexed", swapped, order)
    # Radix tree: the first alloc site's call stack at element L.
    at, lin, count_at = ix.first_alloc
    el = lambda i: ix.cspo + 4 * i
    add("idx-radix-id-outside.indexed", put32(d, at, 0xfffffff0),
        f"call stack id {0xfffffff0} is outside the radix array ({ix.nradix} "
        "elements)")
    add("idx-radix-length-huge.indexed", put32(d, el(lin), 0x7fffffff),
        f"call stack {lin}: length 2147483647 exceeds the radix array")
    add("idx-radix-jump-leaves.indexed", put32(d, el(lin + 1), -1000000),
        f"call stack {lin}: jump at element {lin + 1} leaves the radix array")
    add("idx-radix-jump-intmin.indexed", put32(d, el(lin + 1), 0x80000000),
        f"call stack {lin}: jump at element {lin + 1} leaves the radix array")
    loop = put32(put32(d, el(lin + 1), -1), el(lin + 2), -1)
    add("idx-radix-jump-to-jump.indexed", loop,
        f"call stack {lin}: jump at element {lin + 1} lands on another jump")
    add("idx-radix-bad-frame.indexed", put32(d, el(lin + 1), 0x7ffffff0),
        f"call stack {lin}: frame id {0x7ffffff0} at element {lin + 1} is not in "
        f"the frame array ({ix.nframes} frames)")
    add("idx-record-count-huge.indexed", put64(d, count_at, 2**60),
        f"memprof record at offset 0x{count_at:x}: count {2**60} does not fit in "
        "the record")
    add("idx-record-table-buckets-huge.indexed", put64(d, ix.rto, 2**40),
        f"memprof record table at offset 0x{ix.rto:x}: {2**40} buckets do not "
        "fit in the file")
    add("idx-record-table-buckets-not-pow2.indexed", put64(d, ix.rto, 3),
        f"memprof record table at offset 0x{ix.rto:x}: bucket count 3 is not a "
        "power of two")
    return c


# ---- our symbolized section (docs/symbolized-section.md) ----------------------

def symsec_cases(ours):
    """Damage behind the 40-byte trailer: magic, u32 major, u32 minor, u64
    section offset, u64 section size, u32 crc32 of the section, u32 pad."""
    import zlib
    c = []
    add = lambda name, data, msg: c.append((name, data, msg))
    n = len(ours)
    t = n - 40
    base, size = u64(ours, t + 16), u64(ours, t + 24)

    def fix_crc(d):
        return put32(d, t + 32, zlib.crc32(d[base:base + size]))

    add("sym-major-2.memprofdata", put32(ours, t + 8, 2),
        "symbolized section has version 2.0; this reader understands major "
        "version 1 only")
    add("sym-offset-wrong.memprofdata", put64(ours, t + 16, base + 8),
        f"symbolized section trailer at offset 0x{t:x}: section "
        f"0x{base + 8:x}+0x{size:x} does not end at the trailer")
    add("sym-size-huge.memprofdata", put64(ours, t + 24, 2**63),
        "does not end at the trailer")
    flipped = bytearray(ours)
    flipped[base + size // 2] ^= 0x55
    crc = zlib.crc32(bytes(flipped[base:base + size]))
    add("sym-crc-mismatch.memprofdata", bytes(flipped),
        f"symbolized section at offset 0x{base:x} is damaged (crc32 "
        f"0x{crc:08x}, trailer says 0x{u32(ours, t + 32):08x})")
    add("sym-header-size-huge.memprofdata", fix_crc(put32(ours, base, 0xffffff)),
        f"symbolized section at offset 0x{base:x}: bad header size")
    # version 1.1's facts: the sampling-interval table
    end = size + 16  # where with_facts puts the table
    add("sym-facts-outside.memprofdata", with_facts(ours, [4096, 65536], at=end + 8),
        f"symbolized section at offset 0x{base:x}: 2 sampling intervals at "
        f"0x{end + 8:x} are outside the section")
    add("sym-facts-count-huge.memprofdata", with_facts(ours, [4096], n=2**32 - 1),
        f"symbolized section at offset 0x{base:x}: 4294967295 sampling intervals at "
        f"0x{end:x} are outside the section")
    add("sym-facts-unordered.memprofdata", with_facts(ours, [65536, 4096]),
        f"symbolized section at offset 0x{base:x}: sampling interval 1 (4096) does "
        "not follow 65536 in increasing order")
    add("sym-facts-repeated.memprofdata", with_facts(ours, [0, 4096, 4096]),
        f"symbolized section at offset 0x{base:x}: sampling interval 2 (4096) does "
        "not follow 4096 in increasing order")
    # version 1.2's temporary allocations: (call-stack key, count) entries
    end = size + 32 + 8  # where with_temporaries puts the table
    add("sym-temps-outside.memprofdata", with_temporaries(ours, [(0, 5)], at=end + 8),
        f"symbolized section at offset 0x{base:x}: 1 temporary allocation entries "
        f"at 0x{end + 8:x} are outside the section")
    add("sym-temps-count-huge.memprofdata", with_temporaries(ours, [(0, 5)], n=2**32 - 1),
        f"symbolized section at offset 0x{base:x}: 4294967295 temporary allocation "
        f"entries at 0x{end:x} are outside the section")
    add("sym-temps-unordered.memprofdata", with_temporaries(ours, [(9, 1), (8, 1)]),
        f"symbolized section at offset 0x{base:x}: temporary allocation entry 1 "
        "(call stack 0x8) does not follow 0x9 in increasing order")
    add("sym-temps-repeated.memprofdata", with_temporaries(ours, [(8, 1), (8, 2)]),
        f"symbolized section at offset 0x{base:x}: temporary allocation entry 1 "
        "(call stack 0x8) does not follow 0x8 in increasing order")
    add("sym-temps-zero.memprofdata", with_temporaries(ours, [(0, 3), (8, 0)]),
        f"symbolized section at offset 0x{base:x}: temporary allocation entry 1 "
        "(call stack 0x8) has count 0")
    add("sym-temps-unknown-stack.memprofdata", with_temporaries(ours, [(0xdead, 1)]),
        f"symbolized section at offset 0x{base:x}: temporary allocation entry 0 "
        "names call stack 0xdead, which the memprof section does not have")
    return c


def grown_section(ours, fields, tail, minor):
    """`ours` with its section's header grown by `fields` (the header
    fields after byte 64), its tables moved on as far, `tail` after the
    section's old end, and the trailer saying 1.<minor> with the new size
    and checksum."""
    import zlib
    t = len(ours) - 40
    base, size = u64(ours, t + 16), u64(ours, t + 24)
    sec = ours[base:base + size]
    head = put32(sec[:64], 0, 64 + len(fields))
    for off in (24, 32, 40, 48):
        head = put64(head, off, u64(head, off) + len(fields))
    new = head + fields + sec[64:] + tail
    trailer = (b"MPSYMSEC" + struct.pack("<IIQQII", 1, minor, base, len(new),
                                         zlib.crc32(new), 0))
    return ours[:base] + new + trailer


def section_size(ours):
    return u64(ours, len(ours) - 40 + 24)


def with_facts(ours, intervals, flags=0, n=None, at=None):
    """`ours` with a version 1.1 section: the header grows to 80 bytes
    (facts flags, the number of intervals and their table's offset), the
    intervals follow the section's old end (at `at` and counted `n` when
    given)."""
    size = section_size(ours)
    facts = struct.pack("<IIQ", flags, len(intervals) if n is None else n,
                        size + 16 if at is None else at)
    return grown_section(ours, facts, struct.pack(f"<{len(intervals)}Q", *intervals), 1)


def with_temporaries(ours, entries, n=None, at=None):
    """`ours` with a version 1.2 section: the header grows to 96 bytes
    (the facts' fields: flags 0 and the one interval 0, then the
    temporaries' count, 0 and offset), the interval and then the (key,
    count) entries follow the section's old end (at `at` and counted `n`
    when given)."""
    size = section_size(ours)
    fields = struct.pack("<IIQIIQ", 0, 1, size + 32, len(entries) if n is None else n,
                         0, size + 40 if at is None else at)
    table = b"".join(struct.pack("<QQ", k, v) for k, v in entries)
    return grown_section(ours, fields, struct.pack("<Q", 0) + table, 2)


# ---- instrumentation profiles (docs/instrprof-format.md) ------------------------

class InstrRaw:
    """Section offsets of a one-profile raw instrprof file."""

    def __init__(self, d):
        self.d = d
        self.h = struct.unpack_from("<16Q", d, 0)
        self.data = 128 + self.h[2]
        self.counters = self.data + 64 * self.h[3] + self.h[4]
        self.names = (self.counters + 8 * self.h[5] + self.h[6] + self.h[7] +
                      self.h[8])
        nsize = self.h[9]
        self.values = self.names + nsize + (8 - nsize % 8) % 8
        # the first record with value sites, and its value data's offset
        self.vrec = next(i for i in range(self.h[3])
                         if any(struct.unpack_from("<3H", d, self.data + 64 * i + 52)))


def instr_raw_cases(d):
    r = InstrRaw(d)
    n = len(d)
    c = []
    add = lambda name, data, msg: c.append((name, data, msg))
    rec0 = r.data
    add("ipr-trunc-100.profraw", d[:100],
        "truncated raw instrprof header at offset 0x0: needs 128 bytes, 100 remain")
    add("ipr-version-9.profraw", put64(d, 8, (u64(d, 8) & ~0xffffffff) | 9),
        "unsupported raw instrprof version 9 at offset 0x0 (supported: 10, "
        "written by clang 19 to 22)")
    add("ipr-32bit.profraw", put64(d, 0, 0xff6c70726f665281),
        "32-bit raw instrprof profiles are not supported")
    add("ipr-temporal.profraw", put64(d, 8, u64(d, 8) | 1 << 63),
        "temporal profiles are not supported")
    add("ipr-vtables.profraw", put64(d, 8 * 13, 1),
        "vtable value profiles (1 vtables) are not supported")
    add("ipr-binid-size-33.profraw", put64(d, 16, 33),
        "binary-id section size 33 is not a multiple of 8")
    add("ipr-binid-len-0.profraw", put64(d, 128, 0),
        "binary id at offset 0x80: length is 0")
    add("ipr-num-data-huge.profraw", put64(d, 24, 2**40),
        f"raw instrprof profile at offset 0x0: the data records end past the end "
        f"of the file (size 0x{n:x}; truncated file?)")
    add(f"ipr-trunc-{r.names + 4}.profraw", d[:r.names + 4],
        f"the names end past the end of the file (size 0x{r.names + 4:x}")
    add("ipr-zero-counters.profraw", put32(d, rec0 + 48, 0),
        "raw instrprof profile at offset 0x0: data record 0: number of counters "
        "is zero")
    csize = 8 * r.h[5]
    add("ipr-counter-offset.profraw", put64(d, rec0 + 16, u64(d, rec0 + 16) + 2**20),
        f"data record 0: counter offset {2**20} is outside the {csize} bytes of "
        "counters")
    add("ipr-many-counters.profraw", put32(d, rec0 + 48, 1000),
        f"data record 0: 1000 counters at offset 0 do not fit in the {csize} "
        "bytes of counters")
    bad = bytearray(d)
    bad[r.names + 4] ^= 0xff  # inside the zlib stream
    usize = d[r.names]  # one-byte ULEB in this file
    add("ipr-bad-zlib.profraw", bytes(bad),
        f"name table at offset 0x{r.names:x}: zlib data does not decompress to "
        f"{usize} bytes")
    add("ipr-value-kinds-9.profraw", put32(d, r.values + 4, 9),
        f"data record {r.vrec}: value data at offset 0x{r.values:x}: number of "
        "value profile kinds 9 is invalid")
    add("ipr-value-size-huge.profraw", put32(d, r.values, 0x7ffffff8),
        f"data record {r.vrec}: value data at offset 0x{r.values:x}: value profile "
        f"data of {0x7ffffff8} bytes does not fit in the {n - r.values} left")
    add("ipr-value-kind-5.profraw", put32(d, r.values + 8, 5),
        f"value data at offset 0x{r.values:x}: value kind 5 is invalid")
    add("ipr-trailing-garbage.profraw", d + b"\x01" * 5,
        f"truncated raw instrprof header at offset 0x{n:x}: needs 128 bytes, 5 "
        "remain")
    return c


def instr_indexed_cases(d):
    """base-ir22.indexed: header (9 words), summary, function table, binary
    ids, vtable names."""
    c = []
    add = lambda name, data, msg: c.append((name, data, msg))
    n = len(d)
    table = u64(d, 32)
    payload = 0x48 + 16 + 8 * 6 + 24 * 16
    # the first item: u16 count at the first bucket, then hash, keylen, datalen
    first = min(u64(d, table + 16 + 8 * b) for b in range(u64(d, table))
                if u64(d, table + 16 + 8 * b))
    item = first + 2
    klen, dlen = u64(d, item + 8), u64(d, item + 16)
    name = d[item + 24:item + 24 + klen].decode()
    rec = item + 24 + klen
    add("ipi-hash-type-1.indexed", put64(d, 24, 1),
        "unsupported hash type 1 (0 = MD5 expected)")
    add("ipi-temporal.indexed", put64(d, 8, u64(d, 8) | 1 << 63),
        "temporal profiles are not supported")
    add("ipi-summary-huge.indexed", put64(d, 0x48, 2**40),
        f"profile summary at offset 0x48: {2**40} fields and 16 cutoffs do not "
        "fit in the file")
    add("ipi-item-size-odd.indexed", put64(d, item + 16, dlen - 4),
        f"function table item at offset 0x{item:x}: data size {dlen - 4} is "
        "not a positive multiple of 8")
    add("ipi-counts-huge.indexed", put64(d, rec + 8, 2**40),
        f"function '{name}': record at offset 0x{rec:x}: {2**40} counters do not fit")
    binid = u64(d, 0x30)
    add("ipi-binid-huge.indexed", put64(d, binid, 2**40),
        f"truncated profile data: binary-id section at offset 0x{binid:x} holds "
        f"{2**40} bytes")
    vt = u64(d, 0x40)
    add("ipi-vtable-names.indexed", put64(d, vt, 8) + b"VTNames\0",
        f"vtable names (8 bytes at offset 0x{vt:x}) are not supported")
    assert payload < table
    return c


# ---- YAML ---------------------------------------------------------------------

def yaml_cases(y):
    c = []
    add = lambda name, data, msg: c.append((name, data, msg))
    text = y.decode()
    add("yaml-no-document-marker.yaml", text.replace("---\n", "").encode(),
        NOT_A_PROFILE)
    cut = text.index("AllocCount:")
    add("yaml-truncated.yaml", text[:cut + 5].encode(),
        "26:11: MemInfoBlock must be a mapping, found a scalar")
    guid = text.index("GUID:") + len("GUID:")
    add("yaml-guid-not-a-number.yaml",
        (text[:guid] + " 0xzz\n" + text[guid:].split("\n", 1)[1]).encode(),
        "11:11: GUID '0xzz': invalid hex64 number")
    big = text.replace("TotalSize:       72\n",
                       "TotalSize:       72\n          AccessHistogramSize: 4294967295\n", 1)
    add("yaml-histogram-size-huge.yaml", big.encode(),
        "AccessHistogramSize 4294967295 is larger than")
    add("yaml-alias.yaml", b"---\nHeapProfileRecords: &a\n  - *a\n",
        "YAML aliases (*a) are not supported")
    add("yaml-deep-nesting.yaml",
        b"---\nHeapProfileRecords:\n  - GUID: 0x1\n    AllocSites: " + b"[" * 10000 + b"\n",
        "4:18: an alloc site must be a mapping, found a sequence")
    return c


# ---- the data-access profile of a memprof v4 section (indexed-format.md 7.4)

def dap_cases(d):
    """base-dap-llvm22.indexed: llvm-profdata-22 merge --memprof-version=4
    of base-dap.yaml (3 records, 2 known-cold symbols, 2 hashes)."""
    c = []
    add = lambda name, data, msg: c.append((name, data, msg))
    mp = u64(d, 40)
    rto, off = u64(d, mp + 24), u64(d, mp + 32)
    n_strs, blob_len = u64(d, off), u64(d, off + 16)
    hashes = off + 24 + (blob_len + 7) // 8 * 8
    recs = hashes + 8 + 8 * u64(d, hashes) + 8
    add("dap-offset-before-records.indexed", put64(d, mp + 32, rto),
        f"data-access profile offset 0x{rto:x} is not after the record table")
    add("dap-offset-past-end.indexed", put64(d, mp + 32, len(d) + 8),
        f"data-access profile offset 0x{len(d) + 8:x} is outside the file")
    add("dap-names-count.indexed", put64(d, off, n_strs + 1),
        f"the name table at offset 0x{off + 24:x} holds 7 names, the header "
        f"says {n_strs + 1} + 2")
    add("dap-blob-len-huge.indexed", put64(d, off + 16, 2**62),
        f"data-access profile: {2**62} bytes of names at offset 0x{off + 24:x} "
        "do not fit in the file")
    zl = bytearray(d)
    zl[off + 24 + 5] ^= 0xff
    add("dap-zlib.indexed", bytes(zl), "zlib data does not decompress to 30 bytes")
    add("dap-hash-count-huge.indexed", put64(d, hashes, 2**61),
        f"data-access profile: {2**61} known-cold hashes at offset 0x{hashes + 8:x} "
        "do not fit in the file")
    add("dap-record-count-huge.indexed", put64(d, recs - 8, 2**40),
        f"data-access profile: {2**40} records at offset 0x{recs:x} do not fit")
    add("dap-symbol-index.indexed", put64(d, recs, 77),
        f"data-access record at offset 0x{recs:x}: symbol index 77 is not a "
        f"string literal hash or a symbol of the {n_strs} names")
    add("dap-file-index.indexed", put64(d, recs + 25, 9),
        f"data-access record at offset 0x{recs:x}: file name index 9 is not one "
        f"of the {n_strs} names")
    add("dap-location-count-huge.indexed", put64(d, recs + 17, 2**59),
        f"data-access record at offset 0x{recs:x}: {2**59} locations do not fit")
    dup = put64(d, recs + 25 + 2 * 12, 0)  # the 2nd record names var1 too
    add("dap-duplicate-record.indexed", dup,
        "data-access profile: data-access record of symbol 'var1' is given twice")
    return c


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "files")
    os.makedirs(out, exist_ok=True)
    rd = lambda n: open(os.path.join(HERE, n), "rb").read()
    cases = (raw_cases(rd("base-v5.profraw"), rd("base-v3.profraw")) +
             indexed_cases(Indexed(rd("base-llvm22.indexed"))) +
             symsec_cases(rd("base-ours.memprofdata")) +
             instr_raw_cases(rd("base-ir22.profraw")) +
             instr_indexed_cases(rd("base-ir22.indexed")) +
             yaml_cases(rd("base.yaml")) +
             dap_cases(rd("base-dap-llvm22.indexed")))
    names = set()
    lines = ["# file\texpected stderr substring\texit status "
             "(generated by make_damaged.py)"]
    for name, data, msg in cases:
        assert name not in names, name
        names.add(name)
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        lines.append(f"{name}\t{msg}\t1")
    cases_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "cases.txt")
    with open(cases_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(cases)} cases in {out}")


if __name__ == "__main__":
    main()
