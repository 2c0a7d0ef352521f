"""`memprof-profdata report --format=pprof` read by Go's pprof (Debian's
golang-go, `go tool pprof`): the sample types, totals per type equal to the
profile's (llvm-profdata-22's reading of the merged file), locations leaf
first with inlined frames in one location callee first, demangled function
names with file and line, the verdict label, and -diff_base against an
older profile.  Skipped (and shown as skipped) without Go."""
import os
import re
import shutil
import unittest

import harness
import report_common as rc

INLINED = os.path.join(rc.HERE, "progs", "inlined.cc")


def pprof(*args):
    env = dict(os.environ)
    env.setdefault("HOME", "/tmp")
    env["PPROF_TMPDIR"] = env.get("TMPDIR", "/tmp")
    return harness.run(["go", "tool", "pprof", *args], env=env).stdout


def raw_samples(text):
    """(sample type names, [(values, location ids, labels)], {location id:
    [(function, file, line)]}) from `pprof -raw`."""
    lines = text.splitlines()
    types = []
    samples, locs = [], {}
    section = None
    cur = None
    for line in lines:
        if line == "Samples:":
            section = "samples"
            continue
        if line == "Locations":
            section = "locations"
            continue
        if line.startswith("Mappings"):
            section = None
            continue
        if section == "samples":
            if not types:
                types = [t.split("/")[0] for t in line.split()]
                continue
            m = re.match(r"\s+([-\d\s]+):\s*([\d ]*)$", line)
            if m:
                samples.append((list(map(int, m.group(1).split())),
                                list(map(int, m.group(2).split())), []))
            elif line.strip() and samples:
                samples[-1][2].append(line.strip())
        elif section == "locations":
            m = re.match(r"\s+(\d+): 0x\w+ M=\d+ (.+) (\S+):(\d+) s=", line)
            if m:
                cur = int(m.group(1))
                locs[cur] = [(m.group(2), m.group(3), int(m.group(4)))]
                continue
            m = re.match(r"\s+(.+) (\S+):(\d+) s=", line)
            if m and cur is not None:
                locs[cur].append((m.group(1), m.group(2), int(m.group(3))))
    return types, samples, locs


@unittest.skipUnless(shutil.which("go"), "Go's pprof (golang-go) is not installed")
class Pprof(rc.MultiTest):
    def write(self, profile, name="p.pb.gz", *args):
        out = self.scratch.path(name)
        rc.report(profile, "--format=pprof", "-o", out, *args)
        return out

    def test_totals_equal_the_profile(self):
        types, samples, locs = raw_samples(pprof("-raw", self.write(self.multi.indexed)))
        # the roots' four (docs/memprof-profdata.md) are 0 without a roots file
        self.assertEqual(types, ["alloc_objects", "alloc_space", "total_lifetime", "accesses",
                                 "retained_objects", "retained_space", "leaked_objects",
                                 "leaked_space"])
        self.assertEqual({v for s in samples for v in s[0][4:]}, {0})
        fields = ["AllocCount", "TotalSize", "TotalLifetime", "TotalAccessCount"]
        want = [sum(m[f] for m in self.multi.contexts.values()) for f in fields]
        got = [sum(s[0][k] for s in samples) for k in range(4)]
        self.assertEqual(got, want)
        self.assertEqual(len(samples), len(self.multi.contexts))
        # per sample too: each context's values, keyed by its leaf-first stack
        by_alloc = sorted(tuple(m[f] for f in fields) for m in self.multi.contexts.values())
        self.assertEqual(sorted(tuple(s[0][:4]) for s in samples), by_alloc)
        # the default type, as `-top` reports it
        top = pprof("-top", self.scratch.path("p.pb.gz"))
        self.assertIn("Type: alloc_space", top)
        top = pprof("-top", "-sample_index=total_lifetime", self.scratch.path("p.pb.gz"))
        self.assertIn("Type: total_lifetime", top)

    def test_stacks_names_and_labels(self):
        path = self.write(self.multi.indexed, "v.pb.gz", "--memprof-ave-lifetime-cold-threshold=1")
        _, samples, locs = raw_samples(pprof("-raw", path))
        biggest = max(samples, key=lambda s: s[0][1])
        names = [locs[l][0][0] for l in biggest[1]]
        self.assertEqual(names, ["mixed_site(unsigned long)", "mid1(unsigned long)",
                                 "top_a()", "main"])
        self.assertEqual(locs[biggest[1][0]][0][1:], (rc.MULTI, 22))
        self.assertEqual(biggest[2], ["verdict:[cold]"])
        self.assertEqual(sorted(l for s in samples for l in s[2]),
                         ["verdict:[cold]"] * 3 + ["verdict:[notcold]"] * 7)

    def test_inline_frames_share_a_location(self):
        prog = rc.Profiled(self.scratch, INLINED)
        _, samples, locs = raw_samples(pprof("-raw", self.write(prog.indexed)))
        by_size = {s[0][1]: s for s in samples}
        inl = by_size[100]
        self.assertEqual(locs[inl[1][0]], [("inner(unsigned long)", INLINED, 8),
                                           ("outer(unsigned long)", INLINED, 12)])
        self.assertEqual(locs[inl[1][1]][0][0], "main")
        self.assertEqual(len(inl[1]), 2)
        plain = by_size[200]
        self.assertEqual([locs[l][0][0] for l in plain[1]], ["plain(unsigned long)", "main"])

    def test_diff_base(self):
        _, raws2 = harness.run_program(self.multi.scratch, self.multi.exe,
                                          env=rc.FP_ONLY)
        both = self.scratch.path("both.memprofdata")
        harness.memprof_profdata("merge", self.multi.raws[0], raws2[0],
                                 f"--profiled-binary={self.multi.exe}", "-o", both)
        new, old = self.write(both, "new.pb.gz"), self.write(self.multi.indexed, "old.pb.gz")
        _, samples, _ = raw_samples(pprof("-raw", f"-diff_base={old}", new))
        second = harness.parse_memprof_yaml(harness.run(
            ["llvm-profdata-22", "show", "--memory", both]).stdout)
        both_ctx = rc.unique_contexts(second)
        for k, f in enumerate(["AllocCount", "TotalSize"]):
            want = (sum(m[f] for m in both_ctx.values())
                    - sum(m[f] for m in self.multi.contexts.values()))
            self.assertEqual(sum(s[0][k] for s in samples), want)

    def test_not_larger_than_the_indexed_file(self):
        self.assertLessEqual(os.path.getsize(self.write(self.multi.indexed)),
                             os.path.getsize(self.multi.indexed))


if __name__ == "__main__":
    harness.main()
