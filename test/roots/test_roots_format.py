"""test_roots_format.py - the Python roots writer and reader
(lib/roots_file.py) and the C reader (profdata/roots/roots.c, through
test_roots_read --json) agree on random files, and refuse every truncation
of one at the same offset (docs/roots-format.md)."""
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
    unreached = random_list(rng, True)
    tot = [sum(r["retained"][k] for r in roots) + sums(shared, 2)[k] +
           sums(unreached, 2)[k] for k in range(2)]
    return {"kind": rng.randint(1, 4), "t_ms": rng.randint(0, 9999),
            "heap_bytes": tot[0], "heap_blocks": tot[1],
            "scanned": rng.randint(0, 1 << 30), "modules": mods, "roots": roots,
            "shared": sums(shared, 2), "shared_ctx": shared,
            "unreached": sums(unreached, 4), "unreached_ctx": unreached}


def random_file(rng):
    return {"version": 2, "pid": rng.randint(1, 1 << 22), "raw_bytes": rng.randint(0, 1 << 30),
            "census": [random_census(rng) for _ in range(rng.randint(0, 3))]}


def tuples(f):
    """The C reader's JSON lists as the Python reader's tuples."""
    for c in f["census"]:
        for k in ("shared", "unreached"):
            c[k] = tuple(c[k])
            c[k + "_ctx"] = [tuple(e) for e in c[k + "_ctx"]]
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
        data = rf.encode(f)
        for n in range(len(data)):
            with self.assertRaises(rf.RootsError) as py:
                rf.decode(data[:n])
            got, err = self.c_read(data[:n])
            self.assertIsNone(got, f"truncated to {n} accepted")
            self.assertIn(f"x.roots: roots file at offset 0x{py.exception.offset:x}:", err)

    def test_versions(self):
        """Version 1 files are read, but for a census at a new high (kind
        4, version 2); other versions are refused."""
        f = random_file(random.Random(7))
        f["census"] = [random_census(random.Random(8))]
        for version, kind, ok in ((1, 3, True), (1, 4, False), (2, 4, True), (3, 1, False)):
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

    def test_sums_checked(self):
        f = random_file(random.Random(5))
        f["census"] = [random_census(random.Random(6))]
        f["census"][0]["heap_bytes"] += 1
        got, err = self.c_read(rf.encode(f))
        self.assertIsNone(got)
        self.assertIn("the heap held", err)


if __name__ == "__main__":
    harness.main()
