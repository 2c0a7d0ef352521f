"""rt_common.py - what the runtime API tests (test/runtime/test_rt_*.py)
share: one program whose allocation sites are marked `// @name`, profiled
under several runtimes and compilers, every marked site checked exactly.

Expected values are tuples (AllocCount, TotalSize, TotalAccessCount) or
(AllocCount, TotalSize, TotalAccessCount, histogram); None means the site
must be absent from the profile.
"""
import harness


def prog(name):
    """Path of a C test program in test/runtime/progs/."""
    return harness.prog_path(__file__, name)


# Our runtime under clang 19, writing raw v4 (what LLVM 19's tools read).
CLANG19_RAW_V4 = {"llvm": 19, "env": {"MEMPROF_OPTIONS": "raw_version=4"}}
CALLBACKS = ["-mllvm", "-memprof-use-callbacks"]


def assert_sites(test, sites, marks, expected):
    """Check every marker of `expected` (see the module docstring)."""
    for name, want in expected.items():
        with test.subTest(site=name):
            if want is None:
                test.assertIsNone(harness.find_marked(sites, marks, name),
                                  f"@{name} should be absent")
                continue
            if isinstance(want, list):  # any of these (alloc, size, accesses)
                rec = harness.find_marked(sites, marks, name)
                test.assertIsNotNone(rec, f"@{name} not in the profile")
                got = (rec["mib"]["AllocCount"], rec["mib"]["TotalSize"],
                       rec["mib"]["TotalAccessCount"])
                test.assertIn(got, want, f"@{name}: counts")
                continue
            harness.assert_site(test, sites, marks, name, *want[:3])
            if len(want) > 3:
                test.assertEqual(harness.find_marked(sites, marks, name)["hist"],
                                 want[3], f"@{name}: histogram")


class MarkedProgram(harness.ProfTest):
    """Subclasses set PROG (a program in progs/), EXPECTED (marker ->
    expected tuple) and LLVM22 (markers whose value differs with LLVM 22's
    runtime)."""
    PROG = ""
    EXPECTED = {}
    LLVM22 = {}

    def setUp(self):
        super().setUp()
        self.src = prog(self.PROG)
        with open(self.src) as f:
            self.marks = harness.marked_sites(f.read())

    def check_run(self, runtime="ours", **kw):
        """Profile the program once (kw as harness.profile_sites) and check
        every site; LLVM22 overrides EXPECTED for LLVM's runtime."""
        sites, _ = harness.profile_sites(self.scratch, self.src, runtime=runtime, **kw)
        expected = dict(self.EXPECTED)
        if runtime == "llvm":
            expected.update(self.LLVM22)
        assert_sites(self, sites, self.marks, expected)


class ThreeRuntimes(MarkedProgram):
    """The usual trio: ours with clang 22 (raw v5), ours with clang 19 (raw
    v4), and LLVM 22's own runtime as the reference."""

    def test_ours(self):
        self.check_run()

    def test_ours_clang19_raw_v4(self):
        self.check_run(**CLANG19_RAW_V4)

    def test_llvm22_reference(self):
        self.check_run("llvm")
