"""test_roots_format.py - the Python roots writer and reader
(lib/roots_file.py) and the C reader (profdata/roots/roots.c, through
test_roots_read --json) agree on random files (version 3, with bands),
on the fuzz seeds (versions 1 to 3), refuse every truncation of one at the
same offset, and refuse each broken rule of the bands (section 4.1) at the
same offset (docs/roots-format.md)."""
import json
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import harness  # noqa: E402
import roots_file as rf  # noqa: E402


def random_list(rng, wide):
    ids = sorted(rng.sample(range(0, 3000), rng.randint(0, 6)))
    out = []
    for i in ids:
        blocks = rng.randint(1, 50)
        nbytes = rng.choice([0, 8, 1000, 1 << 33]) * blocks
        if wide:
            db = rng.randint(0, blocks)
            out.append((i, nbytes, blocks, nbytes * db // blocks, db))
        else:
            out.append((i, nbytes, blocks))
    return out


def sums(lst, n):
    return tuple(sum(e[k] for e in lst) for k in range(1, n + 1))


def random_bands(rng, roots, shared):
    """Bands over the roots whose reached figures count (flag bit 0
    clear), splitting the shared blocks; the roots' reached figures grow
    by the bands they are in."""
    ok = [i for i, r in enumerate(roots) if not r["flags"] & 1]
    left, bands, sets = list(shared), [], set()
    for _ in range(rng.randint(0, 4) if len(ok) >= 2 else 0):
        roots_of = tuple(sorted(rng.sample(ok, rng.randint(2, len(ok)))))
        if roots_of in sets or not left[1]:
            continue
        sets.add(roots_of)
        b = (roots_of, rng.randint(0, left[0]), rng.randint(1, left[1]))
        left = [left[0] - b[1], left[1] - b[2]]
        bands.append(b)
    bands.sort(key=lambda b: -b[1])
    for roots_of, nbytes, blocks in bands:
        for i in roots_of:
            r = roots[i]
            r["reached"] = (r["reached"][0] + nbytes, r["reached"][1] + blocks)
    return bands, tuple(left)


def random_census(rng):
    mods = [f"/lib/m{i}.so" for i in range(rng.randint(0, 3))]
    roots = []
    for _ in range(rng.randint(0, 5)):
        kind = rng.randint(1, 4) if mods else rng.choice([3, 4])
        ctx = random_list(rng, False)
        ret = sums(ctx, 2)
        roots.append({"kind": kind, "flags": rng.randint(0, 1),
                      "module": rng.randint(1, len(mods)) if kind <= 2 else 0,
                      "offset": rng.randint(0, 1 << 40), "size": rng.randint(0, 99),
                      "name": rng.choice(["", "g", "cache_\u00e9"]),
                      "reached": (ret[0] + rng.randint(0, 99), ret[1] + rng.randint(0, 3)),
                      "retained": ret, "ctx": ctx})
    shared = random_list(rng, False)
    bands, other = random_bands(rng, roots, sums(shared, 2))
    unreached = random_list(rng, True)
    tot = [sum(r["retained"][k] for r in roots) + sums(shared, 2)[k] +
           sums(unreached, 2)[k] for k in range(2)]
    return {"kind": rng.randint(1, 4), "t_ms": rng.randint(0, 9999),
            "heap_bytes": tot[0], "heap_blocks": tot[1],
            "scanned": rng.randint(0, 1 << 30), "modules": mods, "roots": roots,
            "shared": sums(shared, 2), "shared_ctx": shared,
            "bands": bands, "other": other,
            "unreached": sums(unreached, 4), "unreached_ctx": unreached}


def random_file(rng):
    return {"version": 3, "pid": rng.randint(1, 1 << 22), "raw_bytes": rng.randint(0, 1 << 30),
            "census": [random_census(rng) for _ in range(rng.randint(0, 3))]}


def bands_file():
    """A version 3 file whose census has 3 globals and 2 bands:
    {0, 1} 200 bytes in 2 blocks, {1, 2} 60 in 1, others 40 in 1."""
    roots = [{"kind": 1, "flags": 0, "module": 1, "offset": 16 * i, "size": 8,
              "name": f"g{i}", "reached": reached, "retained": (10, 1),
              "ctx": [(1 + i, 10, 1)]}
             for i, reached in enumerate(((210, 3), (270, 4), (70, 2)))]
    c = {"kind": 3, "t_ms": 1, "heap_bytes": 330, "heap_blocks": 7, "scanned": 64,
         "modules": ["/bin/app"], "roots": roots, "shared": (300, 4),
         "shared_ctx": [(7, 300, 4)], "bands": [((0, 1), 200, 2), ((1, 2), 60, 1)],
         "other": (40, 1), "unreached": (0, 0, 0, 0), "unreached_ctx": []}
    return {"version": 3, "pid": 5, "raw_bytes": 0, "census": [c]}


def damaged_bands():
    """(name, file bytes, what the C reader's message says) for each rule
    of section 4.1 a file can break."""
    out = []

    def case(name, what, change):
        f = bands_file()
        change(f["census"][0])
        out.append((name, rf.encode(f), what))

    def one_root(c):
        c["bands"][0] = ((0,), 200, 2)

    def out_of_range(c):
        c["bands"][1] = ((1, 3), 60, 1)

    def not_increasing(c):
        c["bands"][1] = ((1, 1), 60, 1)

    def partial(c):
        c["roots"][2]["flags"] = 1

    def unordered(c):
        c["bands"][0], c["other"] = ((0, 1), 50, 2), (190, 1)

    def no_blocks(c):
        c["bands"][1], c["other"] = ((1, 2), 60, 0), (40, 2)

    def shares_too_much(c):
        c["roots"][2]["reached"] = (69, 2)

    def same_set(c):
        c["bands"][1] = ((0, 1), 60, 1)
        c["roots"][0]["reached"] = (270, 4)

    def bad_sum(c):
        c["other"] = (41, 1)

    case("band-one-root", "band 0: 1 roots", one_root)
    case("band-index-range", "band 1: root index delta 2", out_of_range)
    case("band-not-increasing", "band 1: root index delta 0", not_increasing)
    case("band-partial-root", "band 1: root 2 has no reached figures", partial)
    case("band-unordered", "band 1: 0 blocks, or more bytes than the band before", unordered)
    case("band-no-blocks", "band 1: 0 blocks", no_blocks)
    case("band-shares-too-much", "band 1: root 2 shares more than it reaches", shares_too_much)
    case("band-same-set", "band 1: the same roots as an earlier band", same_set)
    case("band-bad-sum", "the bands and other sets sum to 301 bytes in 4 blocks, the shared "
         "blocks are 300 in 4", bad_sum)
    return out


def tuples(f):
    """The C reader's JSON lists as the Python reader's tuples."""
    for c in f["census"]:
        for k in ("shared", "unreached"):
            c[k] = tuple(c[k])
            c[k + "_ctx"] = [tuple(e) for e in c[k + "_ctx"]]
        if "bands" in c:
            c["bands"] = [(tuple(b[0]), b[1], b[2]) for b in c["bands"]]
            c["other"] = tuple(c["other"])
        for r in c["roots"]:
            r["reached"], r["retained"] = tuple(r["reached"]), tuple(r["retained"])
            r["ctx"] = [tuple(e) for e in r["ctx"]]
    return f


class RootsFormat(unittest.TestCase):
    def setUp(self):
        self.tool = harness.find_built("test_roots_read")
        self.s = harness.Scratch("rootsfmt")
        self.addCleanup(self.s.cleanup)

    def c_read(self, data):
        path = self.s.path("x.roots")
        with open(path, "wb") as f:
            f.write(data)
        r = harness.run([self.tool, "--json", path], check=False)
        if r.returncode:
            return None, r.stderr.strip()
        return tuples(json.loads(r.stdout)), None

    def test_random_roundtrip(self):
        rng = random.Random(35)
        for _ in range(60):
            data = rf.encode(random_file(rng))
            want = rf.decode(data)
            got, err = self.c_read(data)
            self.assertIsNone(err)
            self.assertEqual(got, want)

    def test_truncations_refused_at_same_offset(self):
        rng = random.Random(3)
        f = random_file(rng)
        while not f["census"] or not f["census"][0]["roots"]:
            f = random_file(rng)
        for data in (rf.encode(f), rf.encode(bands_file())):
            self.truncations(data)

    def truncations(self, data):
        for n in range(len(data)):
            with self.assertRaises(rf.RootsError) as py:
                rf.decode(data[:n])
            got, err = self.c_read(data[:n])
            self.assertIsNone(got, f"truncated to {n} accepted")
            self.assertIn(f"x.roots: roots file at offset 0x{py.exception.offset:x}:", err)

    def test_versions(self):
        """Versions 1 and 2 are read (no bands), but for a census at a new
        high (kind 4) in version 1; version 4 is refused."""
        f = random_file(random.Random(7))
        f["census"] = [random_census(random.Random(8))]
        for version, kind, ok in ((1, 3, True), (1, 4, False), (2, 4, True), (3, 4, True),
                                  (4, 1, False)):
            f["version"], f["census"][0]["kind"] = version, kind
            data = rf.encode(f)
            got, err = self.c_read(data)
            with self.subTest(version=version, kind=kind):
                if ok:
                    self.assertEqual(got, rf.decode(data))
                    continue
                self.assertIsNone(got)
                with self.assertRaises(rf.RootsError) as py:
                    rf.decode(data)
                self.assertIn(f"x.roots: roots file at offset 0x{py.exception.offset:x}:", err)

    def test_bands_damaged(self):
        """Each rule of section 4.1 broken: both readers refuse the file at
        the same offset, the C reader saying which rule."""
        data = rf.encode(bands_file())
        got, err = self.c_read(data)
        self.assertIsNone(err)
        self.assertEqual(got, rf.decode(data))
        for name, data, what in damaged_bands():
            with self.subTest(name):
                with self.assertRaises(rf.RootsError) as py:
                    rf.decode(data)
                got, err = self.c_read(data)
                self.assertIsNone(got)
                self.assertIn(f"x.roots: roots file at offset 0x{py.exception.offset:x}: "
                              f"{what}", err)

    def test_corpus_and_regressions(self):
        """The fuzz seeds (versions 1 to 3, written by the runtime) read
        alike in both readers; the roots regressions (damaged_bands()) are
        refused by both at the same offset."""
        fuzz = os.path.join(os.path.dirname(__file__), "..", "fuzz")
        seeds = sorted(os.listdir(os.path.join(fuzz, "corpus", "roots")))
        versions = set()
        for name in seeds:
            with open(os.path.join(fuzz, "corpus", "roots", name), "rb") as fh:
                data = fh.read()
            want = rf.decode(data)
            versions.add(want["version"])
            self.assertEqual(self.c_read(data), (want, None), name)
        self.assertEqual(versions, {1, 2, 3})
        reg = os.path.join(fuzz, "regressions", "roots")
        names = sorted(os.listdir(reg))
        self.assertEqual(names, sorted(n for n, _, _ in damaged_bands()))
        for name in names:
            with open(os.path.join(reg, name), "rb") as fh:
                data = fh.read()
            with self.assertRaises(rf.RootsError) as py:
                rf.decode(data)
            got, err = self.c_read(data)
            self.assertIsNone(got, name)
            self.assertIn(f"roots file at offset 0x{py.exception.offset:x}:", err)

    def test_sums_checked(self):
        f = random_file(random.Random(5))
        f["census"] = [random_census(random.Random(6))]
        f["census"][0]["heap_bytes"] += 1
        got, err = self.c_read(rf.encode(f))
        self.assertIsNone(got)
        self.assertIn("the heap held", err)


if __name__ == "__main__":
    harness.main()
