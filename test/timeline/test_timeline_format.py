"""test_timeline_format.py - the Python timeline writer (lib/timeline_file.py)
and the C reader (profdata/timeline/timeline.c, through test_timeline_read --json)
agree on random files, and both refuse the same damaged files at the same
offset (docs/timeline-format.md)."""
import json
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import harness  # noqa: E402
import timeline_file as tf  # noqa: E402


def random_ctx(rng, n):
    ids = sorted(rng.sample(range(0, 5000), n))
    return [(i, rng.choice([0, 1, 100, 1 << 20, 1 << 40]), rng.randint(1, 300))
            for i in ids]


def random_timeline(rng):
    peak = random_ctx(rng, rng.randint(0, 40))
    exit_ctx = [c for c in peak if rng.random() < 0.3]
    top = rng.randint(1, 20)
    t = {"pid": rng.randint(1, 1 << 22), "raw_bytes": rng.randint(0, 1 << 30),
         "interval_ms": 10, "top_n": top, "census": []}
    now = 0
    for _ in range(rng.randint(0, 30)):
        now += rng.randint(0, 40)
        t["census"].append({"t_ms": now, "other_bytes": rng.randint(0, 1 << 33),
                            "ctx": random_ctx(rng, rng.randint(0, top))})
    t["end_ms"] = now + rng.randint(0, 5)
    t["peak"] = {"t_ms": rng.randint(0, t["end_ms"]), "ctx": peak}
    t["exit"] = {"ctx": exit_ctx}
    return t


class TimelineFormat(unittest.TestCase):
    def setUp(self):
        self.tool = harness.find_built("test_timeline_read")
        self.s = harness.Scratch("tlfmt")
        self.addCleanup(self.s.cleanup)

    def c_read(self, data):
        path = self.s.path("x.timeline")
        with open(path, "wb") as f:
            f.write(data)
        r = harness.run([self.tool, "--json", path], check=False)
        if r.returncode:
            return None, r.stderr.strip()
        return json.loads(r.stdout), None

    def test_random_roundtrip(self):
        rng = random.Random(26)
        for _ in range(60):
            data = tf.encode(random_timeline(rng))
            want = tf.decode(data)
            got, err = self.c_read(data)
            self.assertIsNone(err)
            for sec in ("peak", "exit"):
                got[sec]["ctx"] = [tuple(c) for c in got[sec]["ctx"]]
            for c in got["census"]:
                c["ctx"] = [tuple(x) for x in c["ctx"]]
            self.assertEqual(got, want)

    def test_truncations_refused_at_same_offset(self):
        rng = random.Random(7)
        data = tf.encode(random_timeline(rng))
        for n in range(len(data)):
            cut = data[:n]
            with self.assertRaises(tf.TimelineError) as py:
                tf.decode(cut)
            got, err = self.c_read(cut)
            self.assertIsNone(got, f"truncated to {n} accepted")
            self.assertIn(f"x.timeline: timeline at offset 0x{py.exception.offset:x}:",
                          err)

    def test_fuzz_seeds_read(self):
        """The fuzzer's seeds (test/fuzz/timeline_seeds.py) are of the
        current version: both readers take them and agree."""
        seeds = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz",
                             "corpus", "timeline")
        names = sorted(os.listdir(seeds))
        self.assertEqual(len(names), 4, names)
        for name in names:
            with open(os.path.join(seeds, name), "rb") as f:
                data = f.read()
            got, err = self.c_read(data)
            self.assertIsNone(err, name)
            self.assertEqual(got["total_allocs"], tf.decode(data)["total_allocs"], name)


if __name__ == "__main__":
    harness.main()
