"""roots_file.py - read memprof roots files (docs/roots-format.md,
versions 1 to 3) in tests, and write them (for the C reader's tests).

A roots file is a dict:

    {"version": 3, "pid": 1, "raw_bytes": 0,
     "census": [{"kind": 3, "t_ms": 5, "heap_bytes": 100, "heap_blocks": 2,
                 "scanned": 4096, "modules": ["/bin/app", ...],
                 "roots": [{"kind": 1, "flags": 0, "module": 1, "offset": 0x40,
                            "size": 8, "name": "cache",
                            "reached": (bytes, blocks),
                            "retained": (bytes, blocks),
                            "ctx": [(stack_id, bytes, blocks), ...]}, ...],
                 "shared": (bytes, blocks), "shared_ctx": [(id, bytes, blocks)],
                 "bands": [((root index, ...), bytes, blocks), ...],
                 "other": (bytes, blocks),
                 "unreached": (bytes, blocks, direct_bytes, direct_blocks),
                 "unreached_ctx": [(id, bytes, blocks, dbytes, dblocks)]}]}

"bands" and "other" are in version 3 only.  `decode` checks the counts
and sums the C reader checks (raising RootsError with the offset of the
same byte); `encode` writes what `decode` reads.

Run as a program: `roots_file.py dump FILE` prints a file as JSON.
"""
import json
import sys

from timeline_file import uv

MAGIC = b"MPROOTS\n"
KINDS = {1: "global", 2: "data", 3: "thread", 4: "named"}


class RootsError(ValueError):
    def __init__(self, offset, msg):
        super().__init__(f"roots file at offset 0x{offset:x}: {msg}")
        self.offset = offset


def _s(s):
    b = s.encode()
    return uv(len(b)) + b


def _list(ctx):
    out = bytearray(uv(len(ctx)))
    prev = 0
    for e in sorted(ctx):
        out += uv(e[0] - prev) + b"".join(uv(x) for x in e[1:])
        prev = e[0]
    return bytes(out)


def _encode_bands(c):
    out = bytearray(uv(len(c["bands"])))
    for roots, nbytes, blocks in c["bands"]:
        out += uv(len(roots))
        prev = 0
        for i in roots:
            out += uv(i - prev)
            prev = i
        out += uv(nbytes) + uv(blocks)
    return bytes(out + uv(c["other"][0]) + uv(c["other"][1]))


def encode(f):
    version = f.get("version", 3)
    out = bytearray(MAGIC + uv(version) + uv(0) + uv(f["pid"]) +
                    uv(f["raw_bytes"]))
    out += uv(len(f["census"]))
    for c in f["census"]:
        out += b"".join(uv(c[k]) for k in ("kind", "t_ms", "heap_bytes",
                                           "heap_blocks", "scanned"))
        out += uv(len(c["modules"])) + b"".join(_s(m) for m in c["modules"])
        out += uv(len(c["roots"]))
        for r in c["roots"]:
            out += b"".join(uv(r[k]) for k in ("kind", "flags", "module",
                                               "offset", "size"))
            out += _s(r["name"]) + uv(r["reached"][0]) + uv(r["reached"][1])
            out += uv(r["retained"][0]) + uv(r["retained"][1]) + _list(r["ctx"])
        out += uv(c["shared"][0]) + uv(c["shared"][1]) + _list(c["shared_ctx"])
        if version >= 3:
            out += _encode_bands(c)
        out += b"".join(uv(x) for x in c["unreached"]) + _list(c["unreached_ctx"])
    return bytes(out)


class _Reader:
    def __init__(self, data):
        self.d, self.i = data, 0

    def uv(self):
        at, v, shift = self.i, 0, 0
        while True:
            if self.i >= len(self.d):
                raise RootsError(at, "varint runs past the end")
            b = self.d[self.i]
            self.i += 1
            if shift == 63 and b > 1:
                raise RootsError(at, "varint does not fit 64 bits")
            v |= (b & 0x7F) << shift
            if b < 0x80:
                return v
            shift += 7
            if shift > 63:
                raise RootsError(at, "varint longer than 10 bytes")

    def count(self, per):
        at, n = self.i, self.uv()
        if n * per > len(self.d) - self.i:
            raise RootsError(at, f"count {n} exceeds the bytes left")
        return n

    def string(self):
        n = self.count(1)
        s = self.d[self.i:self.i + n].decode(errors="replace")
        self.i += n
        return s

    def ctx_list(self, width):
        at, n = self.i, self.count(width)
        out, prev = [], 0
        for k in range(n):
            d = self.uv()
            if k and not d:
                raise RootsError(at, "stack ids not increasing")
            prev += d
            out.append((prev,) + tuple(self.uv() for _ in range(width - 1)))
        return out


def _check_sum(at, lst, want, what):
    got = tuple(sum(e[k] for e in lst) for k in range(1, len(want) + 1))
    if got != tuple(want):
        raise RootsError(at, f"{what}: list sums {got} != {tuple(want)}")


def _band_roots(r, c, i):
    at, k = r.i, r.count(1)
    if not 2 <= k <= len(c["roots"]):
        raise RootsError(at, f"band {i}: {k} roots")
    roots, idx = [], 0
    for j in range(k):
        at, d = r.i, r.uv()
        if (j and not d) or idx + d >= len(c["roots"]):
            raise RootsError(at, f"band {i}: root index delta {d}")
        idx += d
        if c["roots"][idx]["flags"] & 1:
            raise RootsError(at, f"band {i}: root {idx} has no reached figures")
        roots.append(idx)
    return tuple(roots)


def _read_bands(r, c):
    """The bands and other sets (section 4.1), checked as the C reader does."""
    n, bands, starts = r.count(5), [], []
    inside = [[0, 0] for _ in c["roots"]]
    for i in range(n):
        starts.append(r.i)
        roots = _band_roots(r, c, i)
        at, nbytes, blocks = r.i, r.uv(), r.uv()
        if not blocks or (bands and nbytes > bands[-1][1]):
            raise RootsError(at, f"band {i}: 0 blocks, or more bytes than the band before")
        for k in roots:
            x = c["roots"][k]
            inside[k][0] += nbytes
            inside[k][1] += blocks
            if (inside[k][0] > x["reached"][0] - x["retained"][0] or
                    inside[k][1] > x["reached"][1] - x["retained"][1]):
                raise RootsError(at, f"band {i}: root {k} shares more than it reaches")
        bands.append((roots, nbytes, blocks))
    seen = set()
    for i, b in enumerate(bands):
        if b[0] in seen:
            raise RootsError(starts[i], f"band {i}: the same roots as an earlier band")
        seen.add(b[0])
    at, other = r.i, (r.uv(), r.uv())
    if (sum(b[1] for b in bands) + other[0], sum(b[2] for b in bands) + other[1]) != \
            tuple(c["shared"]):
        raise RootsError(at, "the bands and other sets do not sum to the shared blocks")
    c["bands"], c["other"] = bands, other


def decode(data):
    if data[:8] != MAGIC:
        raise RootsError(0, "not a roots file (magic)")
    r = _Reader(data)
    r.i = 8
    version = r.uv()
    if version not in (1, 2, 3):
        raise RootsError(8, "version is not 1, 2 or 3")
    if r.uv() != 0:
        raise RootsError(r.i - 1, "flags not 0")
    f = {"version": version, "pid": r.uv(), "raw_bytes": r.uv(), "census": []}
    n = r.count(12)
    for _ in range(n):
        at = r.i
        c = {k: r.uv() for k in ("kind", "t_ms", "heap_bytes", "heap_blocks",
                                 "scanned")}
        if not 1 <= c["kind"] <= (4 if version >= 2 else 3):
            raise RootsError(at, f"census kind {c['kind']} unknown in version {version}")
        c["modules"] = [r.string() for _ in range(r.count(1))]
        c["roots"] = []
        tot_b, tot_n = 0, 0
        for _ in range(r.count(12)):
            x = {k: r.uv() for k in ("kind", "flags", "module", "offset", "size")}
            x["name"] = r.string()
            x["reached"] = (r.uv(), r.uv())
            x["retained"] = (r.uv(), r.uv())
            at = r.i
            x["ctx"] = r.ctx_list(3)
            _check_sum(at, x["ctx"], x["retained"], "retained")
            tot_b += x["retained"][0]
            tot_n += x["retained"][1]
            c["roots"].append(x)
        c["shared"] = (r.uv(), r.uv())
        at = r.i
        c["shared_ctx"] = r.ctx_list(3)
        _check_sum(at, c["shared_ctx"], c["shared"], "shared")
        if version >= 3:
            _read_bands(r, c)
        c["unreached"] = tuple(r.uv() for _ in range(4))
        at = r.i
        c["unreached_ctx"] = r.ctx_list(5)
        _check_sum(at, c["unreached_ctx"], c["unreached"], "unreached")
        if (tot_b + c["shared"][0] + c["unreached"][0] != c["heap_bytes"] or
                tot_n + c["shared"][1] + c["unreached"][1] != c["heap_blocks"]):
            raise RootsError(r.i, "census totals do not add up to the heap")
        f["census"].append(c)
    if r.i != len(data):
        raise RootsError(r.i, "trailing bytes")
    return f


def root_name(c, x):
    """How reports name a root."""
    mod = c["modules"][x["module"] - 1] if x["module"] else ""
    base = mod.rsplit("/", 1)[-1]
    if x["kind"] == 1:
        return f"{x['name']} ({base})"
    if x["kind"] == 2:
        return f"{base}+0x{x['offset']:x}"
    if x["kind"] == 3:
        return f"thread {x['offset']}"
    return f"{x['name']} (named)"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        with open(sys.argv[2], "rb") as fh:
            print(json.dumps(decode(fh.read()), indent=1))
    else:
        sys.exit("usage: roots_file.py dump FILE")
