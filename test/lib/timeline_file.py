"""timeline_file.py - write and read memprof timeline files
(docs/timeline-format.md, version 2) in tests.

A timeline is a dict:

    {"pid": 1, "raw_bytes": 0, "interval_ms": 10, "end_ms": 250, "top_n": 16,
     "total_allocs": 5000, "start_ms": 3, "start_from": 1,
     "peak": {"t_ms": 120, "bytes": 3000, "blocks": 3,
              "ctx": [(stack_id, bytes, blocks), ...]},      # any order
     "exit": {"bytes": 100, "blocks": 1, "ctx": [...]},
     "census": [{"t_ms": 10, "allocs": 20, "live_bytes": 0, "live_blocks": 0,
                 "other_bytes": 0, "ctx": [...]}, ...]}

`encode` fills in missing totals from the lists (peak/exit bytes and blocks,
a census's live_bytes as the list plus other_bytes, live_blocks as the list)
unless they are given, so a test can also write inconsistent files on
purpose.  Allocation counts default to the fewest that make the file
consistent: a census's "allocs" to what its live blocks need beyond the
counts before it (the last census also what the peak and exit need), and
"total_allocs" to the censuses' sum (without censuses, the larger of the
peak's and the exit's blocks).  `decode` checks what the C reader checks and raises TimelineError
with the same offsets (not the same wording).

Run as a program: `timeline_file.py dump FILE` prints a file as JSON;
`timeline_file.py write JSON OUT` writes one from JSON.
"""
import json
import sys

MAGIC = b"MPTLINE\n"


class TimelineError(ValueError):
    def __init__(self, offset, msg):
        super().__init__(f"timeline at offset 0x{offset:x}: {msg}")
        self.offset = offset


def uv(n):
    """The shortest unsigned LEB128 of n."""
    if n < 0 or n >= 1 << 64:
        raise ValueError(f"{n} does not fit a varint")
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(v):
    """A signed value as the unsigned one a varint holds: 2v, or -2v - 1."""
    return 2 * v if v >= 0 else -2 * v - 1


def _ctx_list(ctx):
    ctx = sorted(ctx)
    out = bytearray(uv(len(ctx)))
    prev = 0
    for sid, nbytes, blocks in ctx:
        out += uv(sid - prev) + uv(nbytes) + uv(blocks)
        prev = sid
    return bytes(out)


def _sums(ctx):
    return sum(c[1] for c in ctx), sum(c[2] for c in ctx)


def _alloc_counts(t):
    """The censuses' allocation counts and TotalAllocs (see the docstring)."""
    peak, ex = t.get("peak", {}), t.get("exit", {})
    need = max(peak.get("blocks", _sums(peak.get("ctx", []))[1]),
               ex.get("blocks", _sums(ex.get("ctx", []))[1]))
    counts, cum = [], 0
    cs = t.get("census", [])
    for i, c in enumerate(cs):
        blocks = c.get("live_blocks", _sums(c.get("ctx", []))[1])
        want = max(blocks, need) if i == len(cs) - 1 else blocks
        n = c.get("allocs", max(0, want - cum))
        counts.append(n)
        cum += n
    return counts, t.get("total_allocs", cum if cs else need)


def encode(t):
    out = bytearray(MAGIC)
    counts, total = _alloc_counts(t)
    for k in ("version", "flags", "pid", "raw_bytes", "interval_ms", "end_ms",
              "top_n"):
        out += uv(t.get(k, {"version": 2}.get(k, 0)))
    out += uv(total) + uv(zigzag(t.get("start_ms", 0))) + uv(t.get("start_from", 1))
    peak = t.get("peak", {})
    pctx = peak.get("ctx", [])
    pb, pk = _sums(pctx)
    out += uv(peak.get("t_ms", 0)) + uv(peak.get("bytes", pb)) + uv(peak.get("blocks", pk))
    out += _ctx_list(pctx)
    ex = t.get("exit", {})
    ectx = ex.get("ctx", [])
    eb, ek = _sums(ectx)
    out += uv(ex.get("bytes", eb)) + uv(ex.get("blocks", ek)) + _ctx_list(ectx)
    cs = t.get("census", [])
    out += uv(len(cs))
    prev = 0
    for c, n in zip(cs, counts):
        cb, ck = _sums(c.get("ctx", []))
        other = c.get("other_bytes", 0)
        out += uv(c["t_ms"] - prev) + uv(n)
        out += uv(c.get("live_bytes", cb + other)) + uv(c.get("live_blocks", ck))
        out += uv(other) + _ctx_list(c.get("ctx", []))
        prev = c["t_ms"]
    return bytes(out)


class _Reader:
    def __init__(self, data):
        self.d = data
        self.at = 0

    def uv(self):
        start, x = self.at, 0
        for i in range(10):
            if self.at >= len(self.d):
                raise TimelineError(start, "varint runs past the end of the file")
            b = self.d[self.at]
            self.at += 1
            if i == 9 and b > 1:
                raise TimelineError(start, "varint does not fit in 64 bits")
            x |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                return x
        raise TimelineError(start, "varint longer than 10 bytes")

    def ctx_list(self, max_n=None):
        at = self.at
        n = self.uv()
        if n > (len(self.d) - self.at) // 3:
            raise TimelineError(at, f"{n} contexts cannot fit")
        if max_n is not None and n > max_n:
            raise TimelineError(at, f"{n} contexts, more than TopN {max_n}")
        out, sid = [], 0
        for i in range(n):
            at = self.at
            d = self.uv()
            if i and not d:
                raise TimelineError(at, "id delta 0")
            sid += d
            if sid >= 1 << 64:
                raise TimelineError(at, "stack id overflows 64 bits")
            nbytes = self.uv()
            at = self.at
            blocks = self.uv()
            if not blocks:
                raise TimelineError(at, "0 blocks")
            out.append((sid, nbytes, blocks))
        return out


def decode(data):
    if len(data) < 8:
        raise TimelineError(0, "shorter than the magic")
    if data[:8] != MAGIC:
        raise TimelineError(0, "bad magic")
    r = _Reader(data)
    r.at = 8
    t = {}
    at = r.at
    if r.uv() != 2:
        raise TimelineError(at, "version")
    at = r.at
    if r.uv() != 0:
        raise TimelineError(at, "flags")
    for k in ("pid", "raw_bytes", "interval_ms", "end_ms", "top_n", "total_allocs"):
        t[k] = r.uv()
    at = r.at
    z = r.uv()
    t["start_ms"] = -(z + 1) // 2 if z & 1 else z // 2
    if t["start_ms"] > t["end_ms"]:
        raise TimelineError(at, "StartMs after EndMs")
    at = r.at
    t["start_from"] = r.uv()
    if t["start_from"] not in (1, 2):
        raise TimelineError(at, "StartFrom unknown")
    at = r.at
    peak = {"t_ms": r.uv()}
    if peak["t_ms"] > t["end_ms"]:
        raise TimelineError(at, "PeakMs after EndMs")
    peak["bytes"], peak["blocks"] = r.uv(), r.uv()
    at = r.at
    if peak["blocks"] > t["total_allocs"]:
        raise TimelineError(at, "peak blocks above TotalAllocs")
    peak["ctx"] = r.ctx_list()
    if _sums(peak["ctx"]) != (peak["bytes"], peak["blocks"]):
        raise TimelineError(at, "peak sums")
    t["peak"] = peak
    at = r.at
    ex = {"bytes": r.uv()}
    if ex["bytes"] > peak["bytes"]:
        raise TimelineError(at, "ExitBytes exceeds PeakBytes")
    ex["blocks"] = r.uv()
    at = r.at
    if ex["blocks"] > t["total_allocs"]:
        raise TimelineError(at, "exit blocks above TotalAllocs")
    ex["ctx"] = r.ctx_list()
    if _sums(ex["ctx"]) != (ex["bytes"], ex["blocks"]):
        raise TimelineError(at, "exit sums")
    t["exit"] = ex
    at = r.at
    n = r.uv()
    if n and not t["interval_ms"]:
        raise TimelineError(at, "censuses but IntervalMs is 0")
    census_at = at
    if n > (len(data) - r.at) // 6:
        raise TimelineError(at, f"{n} censuses cannot fit")
    t["census"], time, cum = [], 0, 0
    for _ in range(n):
        at = r.at
        time += r.uv()
        if time > t["end_ms"]:
            raise TimelineError(at, "census after EndMs")
        at = r.at
        c = {"t_ms": time, "allocs": r.uv()}
        cum += c["allocs"]
        if cum > t["total_allocs"]:
            raise TimelineError(at, "allocations exceed TotalAllocs")
        c["live_bytes"] = r.uv()
        at = r.at
        c["live_blocks"] = r.uv()
        if c["live_blocks"] > cum:
            raise TimelineError(at, "live blocks above the allocations so far")
        c["other_bytes"] = r.uv()
        at = r.at
        c["ctx"] = r.ctx_list(t["top_n"])
        cb, ck = _sums(c["ctx"])
        if cb + c["other_bytes"] != c["live_bytes"] or ck > c["live_blocks"]:
            raise TimelineError(at, "census sums")
        t["census"].append(c)
    if n and cum != t["total_allocs"]:
        raise TimelineError(census_at, "the censuses' allocations differ from TotalAllocs")
    if r.at != len(data):
        raise TimelineError(r.at, "bytes after the last census")
    return t


def read(path):
    with open(path, "rb") as f:
        return decode(f.read())


def write(path, t):
    with open(path, "wb") as f:
        f.write(encode(t))


def main(argv):
    if len(argv) == 3 and argv[1] == "dump":
        json.dump(read(argv[2]), sys.stdout, indent=1)
        print()
        return 0
    if len(argv) == 4 and argv[1] == "write":
        with open(argv[2]) as f:
            write(argv[3], json.load(f))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
