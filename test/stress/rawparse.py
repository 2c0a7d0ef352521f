"""rawparse.py - a minimal reader of LLVM raw memory profiles (v3/v4/v5) for
tests that need what llvm-profdata cannot show: segments of other modules
and raw stack PCs.  Layout: docs/raw-format.md.
"""
import struct

MIB_V3 = 132
MIB_V4 = 144


def parse(data):
    """List of dumps: dicts with version, segments [(start, end, offset,
    build_id_hex)], mibs [(stack_id, alloc_count, total_size)], stacks
    {id: [pc, ...]}."""
    dumps = []
    off = 0
    while off < len(data):
        magic, ver, total, segoff, miboff, stkoff = struct.unpack_from("<6Q", data, off)
        if magic != 0xff6d70726f667281 or total == 0:
            raise ValueError(f"bad dump at {off}")
        d = {"version": ver, "segments": [], "mibs": [], "stacks": {}}
        p = off + segoff
        (n,) = struct.unpack_from("<Q", data, p)
        p += 8
        for _ in range(n):
            s, e, o, bsz = struct.unpack_from("<4Q", data, p)
            d["segments"].append((s, e, o, data[p + 32:p + 32 + bsz].hex()))
            p += 64
        p = off + miboff
        (n,) = struct.unpack_from("<Q", data, p)
        p += 8
        for _ in range(n):
            (sid,) = struct.unpack_from("<Q", data, p)
            count, = struct.unpack_from("<I", data, p + 8)
            size, = struct.unpack_from("<Q", data, p + 8 + 28)
            d["mibs"].append((sid, count, size))
            if ver == 3:
                p += 8 + MIB_V3
            else:
                hs, = struct.unpack_from("<I", data, p + 8 + 132)
                p += 8 + MIB_V4 + hs * (8 if ver == 4 else 2)
        p = off + stkoff
        (n,) = struct.unpack_from("<Q", data, p)
        p += 8
        for _ in range(n):
            sid, k = struct.unpack_from("<2Q", data, p)
            d["stacks"][sid] = list(struct.unpack_from(f"<{k}Q", data, p + 16))
            p += 16 + 8 * k
        dumps.append(d)
        off += total
    return dumps
