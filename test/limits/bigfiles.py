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
