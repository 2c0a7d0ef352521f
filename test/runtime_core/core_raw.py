"""core_raw.py - helpers for the runtime-core e2e tests: an independent
reader of raw profiles (v3/v4/v5, concatenated dumps) so tests can assert
exact header fields, MIB values, histograms and stacks, and source-line
helpers for ground truth."""
import os
import struct

MIB_FIELDS = [
    ("AllocCount", "I"), ("TotalAccessCount", "Q"), ("MinAccessCount", "Q"),
    ("MaxAccessCount", "Q"), ("TotalSize", "Q"), ("MinSize", "I"), ("MaxSize", "I"),
    ("AllocTimestamp", "I"), ("DeallocTimestamp", "I"), ("TotalLifetime", "Q"),
    ("MinLifetime", "I"), ("MaxLifetime", "I"), ("AllocCpuId", "I"), ("DeallocCpuId", "I"),
    ("NumMigratedCpu", "I"), ("NumLifetimeOverlaps", "I"), ("NumSameAllocCpu", "I"),
    ("NumSameDeallocCpu", "I"), ("DataTypeId", "Q"), ("TotalAccessDensity", "Q"),
    ("MinAccessDensity", "I"), ("MaxAccessDensity", "I"),
    ("TotalLifetimeAccessDensity", "Q"), ("MinLifetimeAccessDensity", "I"),
    ("MaxLifetimeAccessDensity", "I"), ("AccessHistogramSize", "I"), ("AccessHistogram", "Q")]
MAGIC = 0xFF6D70726F667281


def decode_v5(v):
    return (v & 0xFFF) << (v >> 12)


def read_raw(path):
    """List of profiles: dict(version, total, segments, mibs{id: dict}, stacks{id: [pc]})."""
    with open(path, "rb") as f:
        data = f.read()
    off, out = 0, []
    while off < len(data):
        magic, ver, total, segoff, miboff, stkoff = struct.unpack_from("<6Q", data, off)
        assert magic == MAGIC, f"bad magic at {off}"
        assert total % 8 == 0 and segoff == 48
        prof = {"version": ver, "total": total, "segments": [], "mibs": {}, "stacks": {},
                "mib_offset": miboff, "stack_offset": stkoff}
        p = off + segoff
        (n,) = struct.unpack_from("<Q", data, p)
        p += 8
        for _ in range(n):
            s, e, o, bsz = struct.unpack_from("<4Q", data, p)
            prof["segments"].append((s, e, o, data[p + 32:p + 32 + bsz]))
            p += 64
        assert p == off + miboff
        fields = MIB_FIELDS if ver >= 4 else MIB_FIELDS[:-2]
        fmt = "<" + "".join(c for _, c in fields)
        (n,) = struct.unpack_from("<Q", data, p)
        p += 8
        for _ in range(n):
            (sid,) = struct.unpack_from("<Q", data, p)
            p += 8
            mib = dict(zip([f for f, _ in fields], struct.unpack_from(fmt, data, p)))
            p += struct.calcsize(fmt)
            hs = mib.get("AccessHistogramSize", 0)
            if ver == 4:
                mib["hist"] = list(struct.unpack_from(f"<{hs}Q", data, p))
                p += 8 * hs
            elif ver == 5:
                mib["hist"] = [decode_v5(v) for v in struct.unpack_from(f"<{hs}H", data, p)]
                p += 2 * hs
            prof["mibs"][sid] = mib
        assert (p - off + 7) // 8 * 8 == stkoff, "MIB region size mismatch"
        assert all(b == 0 for b in data[p:off + stkoff]), "padding must be zero"
        p = off + stkoff
        (n,) = struct.unpack_from("<Q", data, p)
        p += 8
        for _ in range(n):
            sid, k = struct.unpack_from("<2Q", data, p)
            p += 16
            prof["stacks"][sid] = list(struct.unpack_from(f"<{k}Q", data, p))
            p += 8 * k
        assert (p - off + 7) // 8 * 8 == total
        out.append(prof)
        off += total
    assert off == len(data)
    return out


def line_offset(src_text, func_line_marker, marker):
    """LineOffset of the line containing `marker` relative to the line that
    contains `func_line_marker` (the function's opening line)."""
    lines = src_text.splitlines()
    f = next(i for i, l in enumerate(lines) if func_line_marker in l)
    m = next(i for i, l in enumerate(lines) if marker in l)
    return m - f


def profiles_in(scratch_dir, prefix="memprof.profraw."):
    return sorted(os.path.join(scratch_dir, f) for f in os.listdir(scratch_dir)
                  if f.startswith(prefix))
