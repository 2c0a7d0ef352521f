"""bigfiles.py - large (mostly sparse) profiles for test_limits.py, built
from the small real profiles in test/damaged/ (seedprog.c, LLVM 22).

Every generator writes PATH and returns nothing; zero regions are left as
holes (truncate), so a 1 GiB file costs a few KiB of disk.
"""
import struct

GIB = 1 << 30


def _header(version, total, seg, mib, stk):
    return struct.pack("<6Q", 0xff6d70726f667281, version, total, seg, mib, stk)


def _write_sparse(path, size, pieces):
    """pieces: [(offset, bytes)]"""
    with open(path, "wb") as f:
        f.truncate(size)
        for off, data in pieces:
            f.seek(off)
            f.write(data)


def raw_sections(base):
    _, ver, total, seg, mib, stk = struct.unpack_from("<6Q", base, 0)
    return ver, base[seg:mib], base[mib:stk], base[stk:total]


def raw_zero_mibs(base, path, size=GIB):
    """The base dump, then a dump of ~size bytes whose MIB table holds
    millions of all-zero MIBs naming stack id 0, whose stack has no PCs:
    valid, and nothing in it survives symbolization."""
    ver, segs, _, _ = raw_sections(base)
    entry = 8 + 144
    n = (size - len(base) - 48 - len(segs) - 8 - 24) // entry
    mib_off = 48 + len(segs)
    stk_off = mib_off + 8 + n * entry
    stack = struct.pack("<QQQ", 1, 0, 0)  # one stack: id 0, 0 PCs
    total = stk_off + len(stack)
    dump2 = len(base)
    _write_sparse(path, dump2 + total, [
        (0, base),
        (dump2, _header(ver, total, 48, mib_off, stk_off) + segs + struct.pack("<Q", n)),
        (dump2 + stk_off, stack)])
    return n


def raw_long_stack(base, path, size=GIB):
    """The base dump, then a dump with one MIB whose stack has ~size/8 PCs,
    all zero (outside every segment, so dropped)."""
    ver, segs, _, _ = raw_sections(base)
    mib_off = 48 + len(segs)
    mib = struct.pack("<QQ", 1, 0x77) + bytes(144)  # count 1, stack id 0x77
    mib = struct.pack("<Q", 1) + struct.pack("<Q", 0x77) + bytes(144)
    stk_off = mib_off + len(mib)
    k = (size - len(base) - stk_off - 24) // 8
    total = stk_off + 24 + 8 * k
    dump2 = len(base)
    _write_sparse(path, dump2 + total, [
        (0, base),
        (dump2, _header(ver, total, 48, mib_off, stk_off) + segs + mib +
         struct.pack("<QQQ", 1, 0x77, k))])
    return k


def raw_many_segments(base, path, size=GIB):
    """The base dump, then a dump whose segment table has ~size/64 all-zero
    entries (empty address ranges, no build id) and no MIBs."""
    ver, _, _, _ = raw_sections(base)
    n = (size - len(base) - 48 - 8 - 16) // 64
    mib_off = 48 + 8 + 64 * n
    stk_off = mib_off + 8
    total = stk_off + 8
    dump2 = len(base)
    _write_sparse(path, dump2 + total, [
        (0, base),
        (dump2, _header(ver, total, 48, mib_off, stk_off) + struct.pack("<Q", n))])
    return n


def raw_big_histogram(base, path, hist_entries):
    """The base dump with its first MIB's AccessHistogramSize set to
    hist_entries and that many (zero) u16 histogram values really present."""
    ver, total, seg, mib, stk = struct.unpack_from("<5Q", base, 8)
    assert ver == 5
    first = mib + 8
    grow = 2 * hist_entries
    grow += (-grow) % 8
    hdr = _header(ver, total + grow, seg, mib, stk + grow)
    mib0 = bytearray(base[first:first + 152])
    struct.pack_into("<I", mib0, 8 + 132, hist_entries)
    head = hdr + base[48:first] + bytes(mib0)
    tail = base[first + 152:]
    # base v5 has no histograms, so its MIB region has no padding to move.
    _write_sparse(path, len(head) + grow + len(tail), [
        (0, head), (len(head) + grow, tail)])


def indexed_big_radix(base, path, size=GIB):
    """An llvm-profdata-22 indexed file (memprof v3) whose radix array is
    followed by ~size bytes of zeros (zero-length call stacks no record
    names): the record payload and table move up, their absolute offsets
    (memprof header, bucket offsets, later header sections) with them."""
    u64 = lambda o: struct.unpack_from("<Q", base, o)[0]
    mp = u64(40)
    assert u64(mp) == 3
    cspo, rpo, rto = u64(mp + 8), u64(mp + 16), u64(mp + 24)
    delta = size - (size % 8)
    out = bytearray(base[:rpo])
    for word in (6, 7, 8):  # binary ids, temporal traces, vtable names
        v = u64(8 * word)
        if v > rpo:
            struct.pack_into("<Q", out, 8 * word, v + delta)
    struct.pack_into("<Q", out, mp + 16, rpo + delta)
    struct.pack_into("<Q", out, mp + 24, rto + delta)
    tail = bytearray(base[rpo:])
    nb = u64(rto)
    for b in range(nb):
        at = rto - rpo + 16 + 8 * b
        off = struct.unpack_from("<Q", tail, at)[0]
        if off:
            struct.pack_into("<Q", tail, at, off + delta)
    _write_sparse(path, rpo + delta + len(tail), [(0, bytes(out)), (rpo + delta, bytes(tail))])


def raw_many_stacks(base, path, n):
    """The base dump's segments with n MIBs, each on its own stack id, all
    stacks the base's first stack's PCs with one PC varied inside main's
    code: many distinct ids, few distinct PCs (a table-growth test)."""
    ver, segs, mibs, stacks = raw_sections(base)
    assert ver == 5
    mib0 = mibs[8:8 + 152]
    k = struct.unpack_from("<Q", stacks, 16)[0]
    pcs = list(struct.unpack_from(f"<{k}Q", stacks, 24))
    mib_part = bytearray(struct.pack("<Q", n))
    stk_part = bytearray(struct.pack("<Q", n))
    for i in range(n):
        sid = i + 1
        mib_part += struct.pack("<Q", sid) + mib0[8:]
        p = list(pcs)
        p[-1] = pcs[-1] + (i % 64)  # the libc frame: unsymbolized, distinct
        stk_part += struct.pack("<QQ", sid, k) + struct.pack(f"<{k}Q", *p) 
    mib_off = 48 + len(segs)
    stk_off = mib_off + len(mib_part)
    total = stk_off + len(stk_part)
    with open(path, "wb") as f:
        f.write(_header(ver, total, 48, mib_off, stk_off) + segs + mib_part + stk_part)


def indexed_set_hist_sizes(data, value):
    """Copy of an indexed file (memprof v3/v4 with AccessHistogramSize in
    its schema) with every non-zero AccessHistogramSize field set to
    `value`.  Indexed files carry no histogram values, so any value is
    well-formed."""
    d = bytearray(data)
    u64 = lambda o: struct.unpack_from("<Q", d, o)[0]
    mp = u64(40)
    v = u64(mp)
    assert v in (3, 4)
    rpo, rto = u64(mp + 16), u64(mp + 24)
    p = mp + 32
    if v == 4:
        p += 8
        nsum = struct.unpack_from("<I", d, p)[0]
        p += 4 + 8 * nsum
    schema = [u64(p + 8 + 8 * i) for i in range(u64(p))]
    u32_tags = {1, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 21, 22, 24, 25, 26}
    offs, size = {}, 0
    for t in schema:
        offs[t] = size
        size += 4 if t in u32_tags else 8
    assert 26 in offs, "schema without AccessHistogramSize"
    q, patched = rpo, 0
    while q < rto:
        (n,) = struct.unpack_from("<H", d, q)
        q += 2
        for _ in range(n):
            kl, dl = u64(q + 8), u64(q + 16)
            data_at = q + 24 + kl
            for i in range(u64(data_at)):
                f = data_at + 8 + i * (4 + size) + 4 + offs[26]
                if struct.unpack_from("<I", d, f)[0]:
                    struct.pack_into("<I", d, f, value)
                    patched += 1
            q = data_at + dl
    assert patched
    return bytes(d)
