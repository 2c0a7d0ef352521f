"""llvm-profdata-22 reads what we write: `show --memory` of our indexed
output (every supported version/schema combination) lists the same records
as our own `show`, and `llvm-profdata-22 merge` reads our YAML back into the
same profile.  clang-19's llvm-profdata reads our default (index v12) file."""
import os

import harness

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs", "contexts.cc")
HOTCOLD = ("AllocCount", "TotalSize", "TotalLifetime", "TotalLifetimeAccessDensity")
VARIANTS = [
    (),
    ("--memprof-version=2",),
    ("--memprof-version=4",),
    ("--memprof-full-schema",),
    ("--index-version=11",),
    ("--index-version=13", "--memprof-version=4", "--memprof-full-schema"),
    ("--no-symbolized-section",),
]


def llvm_show(path):
    r = harness.run(["llvm-profdata-22", "show", "--memory", path])
    return harness.parse_memprof_yaml(r.stdout)


class LLVMInterop(harness.ProfTest):
    def setUp(self):
        super().setUp()
        self.exe = harness.compile_program(self.scratch, SRC, runtime="llvm")
        _, raws = harness.run_program(self.scratch, self.exe)
        self.raw = raws[0]

    def test_llvm_reads_our_indexed(self):
        ref = harness.parse_memprof_yaml(harness.memprof_profdata(
            "show", self.raw, f"--profiled-binary={self.exe}").stdout)
        self.assertGreaterEqual(len(harness.yaml_contexts(ref)), 4)
        for flags in VARIANTS:
            with self.subTest(flags=flags):
                out = self.scratch.path("v.memprofdata")
                harness.memprof_profdata("merge", self.raw, f"--profiled-binary={self.exe}",
                                         *flags, "-o", out)
                theirs = llvm_show(out)
                ours = harness.parse_memprof_yaml(harness.memprof_profdata("show", out).stdout)
                self.assertEqual(harness.yaml_contexts(theirs, HOTCOLD),
                                 harness.yaml_contexts(ref, HOTCOLD))
                self.assertEqual(harness.yaml_contexts(theirs, HOTCOLD),
                                 harness.yaml_contexts(ours, HOTCOLD))
                self.assertEqual(harness.yaml_callsites(theirs), harness.yaml_callsites(ours))
                if "--memprof-full-schema" in flags:
                    self.assertEqual(harness.yaml_contexts(theirs, None).keys(),
                                     harness.yaml_contexts(ours, None).keys())
                    for k, mib in harness.yaml_contexts(theirs).items():
                        self.assertIn("MaxSize", mib, k)
                        self.assertIn("NumMigratedCpu", mib, k)

    def test_llvm_merges_our_yaml(self):
        yaml = self.scratch.path("ours.yaml")
        harness.memprof_profdata("show", self.raw, f"--profiled-binary={self.exe}", "-o", yaml)
        with open(yaml) as f:
            ours = harness.parse_memprof_yaml(f.read())
        back = self.scratch.path("back.memprofdata")
        harness.run(["llvm-profdata-22", "merge", yaml, "-o", back])
        theirs = llvm_show(back)
        self.assertEqual(harness.yaml_contexts(theirs, HOTCOLD),
                         harness.yaml_contexts(ours, HOTCOLD))
        self.assertEqual(harness.yaml_callsites(theirs), harness.yaml_callsites(ours))
        # and we read llvm-profdata's indexed file back to the same profile
        again = harness.parse_memprof_yaml(harness.memprof_profdata("show", back).stdout)
        self.assertEqual(harness.yaml_contexts(again, HOTCOLD),
                         harness.yaml_contexts(ours, HOTCOLD))

    def test_symbolized_show(self):
        r = harness.memprof_profdata("show", "--symbolized", self.raw,
                                     f"--profiled-binary={self.exe}")
        for name in ("_Z9obj_allocm", "_Z9cold_pathm", "_Z8hot_pathm", "main"):
            self.assertIn(name, r.stdout)
        self.assertIn("contexts.cc:", r.stdout)
        # the symbols survive our indexed format (symbolized section)
        out = self.scratch.path("s.memprofdata")
        harness.memprof_profdata("merge", self.raw, f"--profiled-binary={self.exe}", "-o", out)
        r2 = harness.memprof_profdata("show", "--symbolized", out)
        # (the default hot/cold schema keeps 4 MIB fields: compare frames only)
        frames = lambda t: sorted(l for l in t.splitlines() if "Function:" in l)
        self.assertEqual(frames(r2.stdout), frames(r.stdout))
        self.assertIn("# _Z9obj_allocm ", r2.stdout)


if __name__ == "__main__":
    harness.main()
