"""The hot/cold verdicts of `memprof-profdata report` are what clang-22
actually does: the allocation calls it gives each "memprof" attribute and
the !memprof MIB nodes it attaches, counted in the IR of a clang++-22 -O2
-fmemory-profile-use build, equal the report's counts - on the demo's
examples/hotcold and on progs/multi.cc (calls with all-cold, all-busy and
disagreeing contexts, trimmed and pruned two callers up) and
progs/deep_trie.cc (one call, 27 contexts four callers deep),
progs/inline_split.cc (one allocation inlined into a cold and a busy
caller: two calls) and progs/merged.cc (allocations an optimized build
merged: no call clang can match), and progs/containers.cc (libstdc++'s
string growth, allocated in libstdc++.so: the same prediction from the raw
profile and from the merged file), under clang's defaults and under the same
-memprof-* options given to both."""
import collections
import re

import harness
import report_common as rc

# (report options, the same for clang -mllvm)
OPTION_SETS = [
    [],
    ["memprof-ave-lifetime-cold-threshold=1"],
    ["memprof-ave-lifetime-cold-threshold=1", "memprof-keep-all-not-cold-contexts"],
    ["memprof-ave-lifetime-cold-threshold=1", "memprof-callsite-cold-threshold=50"],
    ["memprof-ave-lifetime-cold-threshold=1", "memprof-matching-cold-threshold=50"],
    ["memprof-ave-lifetime-cold-threshold=1", "memprof-use-hot-hints",
     "memprof-min-ave-lifetime-access-density-hot-threshold=3000"],
    ["memprof-ave-lifetime-cold-threshold=1",
     "memprof-lifetime-access-density-cold-threshold=0"],
]


def ir_counts(ir):
    """("memprof" attribute value -> calls carrying it, MIB kind -> nodes).
    Call attributes live in attribute groups (#N) that calls share."""
    groups = {}
    for m in re.finditer(r"^attributes (#\d+) = \{([^}]*)\}", ir, re.M):
        v = re.search(r'"memprof"="(\w+)"', m.group(2))
        if v:
            groups[m.group(1)] = v.group(1)
    calls = collections.Counter()
    for line in ir.splitlines():
        if re.search(r"\b(call|invoke)\b", line) and not line.startswith(("define", "declare")):
            for g in re.findall(r"#\d+", line):
                if g in groups:
                    calls[groups[g]] += 1
    mibs = collections.Counter(re.findall(r'!"(cold|notcold|hot)"', ir))
    return calls, mibs


def report_counts(text):
    m = re.search(r"clang-22: calls cold=(\d+) notcold=(\d+) hot=(\d+) ambiguous=(\d+); "
                  r"mib cold=(\d+) notcold=(\d+)", text)
    assert m, text
    v = list(map(int, m.groups()))
    calls = collections.Counter(dict(zip(["cold", "notcold", "hot", "ambiguous"], v[:4])))
    mibs = collections.Counter(dict(zip(["cold", "notcold"], v[4:])))
    return +calls, +mibs


class Verdicts(rc.MultiTest):
    FULL_SCHEMA = False


    def compare(self, src, profile, options):
        ir = rc.clang_use_ir(self.scratch, src, profile, [f"-{o}" for o in options])
        want = ir_counts(ir)
        got = report_counts(rc.report(profile, *[f"--{o}" for o in options]).stdout)
        self.assertEqual(got, want)
        return want

    def test_multi_context_program(self):
        seen = set()
        for options in OPTION_SETS:
            with self.subTest(options=options):
                calls, mibs = self.compare(rc.MULTI, self.multi.indexed, options)
                seen.add((tuple(sorted(calls.items())), tuple(sorted(mibs.items()))))
        # the option sets exercise different outcomes: every attribute kind,
        # MIB nodes kept and pruned
        kinds = {k for c, _ in seen for k, _ in c}
        self.assertEqual(kinds, {"cold", "notcold", "hot", "ambiguous"})
        self.assertGreaterEqual(len(seen), 5)

    def test_expected_outcome_of_multi(self):
        # cold_site all cold, busy_site and hot_site not cold, mixed_site
        # ambiguous with one cold and one (pruned to one) not-cold context
        got = report_counts(rc.report(self.multi.indexed,
                                      "--memprof-ave-lifetime-cold-threshold=1").stdout)
        self.assertEqual(got, (collections.Counter(cold=1, notcold=2, ambiguous=1),
                               collections.Counter(cold=1, notcold=1)))

    def test_deep_caller_trie(self):
        # one call, 27 contexts four callers deep, cold and not cold mixed
        # at every level, under density thresholds that move the mix
        prog = rc.Profiled(self.scratch, rc.DEEP_TRIE, full_schema=False)
        pruned = 0
        for density in (100, 250, 400, 600, 850):
            base = ["memprof-ave-lifetime-cold-threshold=0",
                    f"memprof-lifetime-access-density-cold-threshold={density}"]
            got = {}
            for extra in ([], ["memprof-keep-all-not-cold-contexts"],
                          ["memprof-callsite-cold-threshold=50"],
                          ["memprof-matching-cold-threshold=40"]):
                with self.subTest(density=density, extra=extra):
                    got[tuple(extra)] = self.compare(rc.DEEP_TRIE, prog.indexed, base + extra)
            kept_all = got[("memprof-keep-all-not-cold-contexts",)][1]["notcold"]
            pruned += got[()][1]["notcold"] < kept_all
        # the default pruning dropped not-cold MIB nodes at some thresholds
        self.assertGreater(pruned, 0)

    def test_allocation_inlined_into_two_callers(self):
        # two calls in the IR, one per caller, each with a single verdict
        # (counting the contexts by allocation frame alone made one
        # ambiguous call of them)
        prog = rc.Profiled(self.scratch, rc.INLINE_SPLIT, full_schema=False)
        options = ["memprof-ave-lifetime-cold-threshold=1"]
        self.assertEqual(self.compare(rc.INLINE_SPLIT, prog.indexed, options),
                         (collections.Counter(cold=1, notcold=1), collections.Counter()))

    def test_merged_allocation_is_not_matched(self):
        # built -O2, the two allocations of merged.cc are one call at a
        # made-up location: clang attaches nothing, and the report says so
        prog = rc.Profiled(self.scratch, rc.MERGED, full_schema=False, opt="-O2")
        self.assertEqual(self.compare(rc.MERGED, prog.indexed, []),
                         (collections.Counter(), collections.Counter()))
        self.assertIn("1 allocation call (320 B) clang cannot match",
                      rc.report(prog.indexed).stdout)

    def test_same_prediction_from_raw_and_merged(self):
        # the blocks libstdc++.so allocates when the program grows a string
        # are allocated at a call of the library: clang cannot match them,
        # which the raw profile shows (the leaf PC is in no given binary)
        # and the merged file keeps (its symbolized section flags the
        # frame), so both predict the same calls, as does a merge of the
        # merged file
        exe = harness.compile_program(self.scratch, rc.CONTAINERS, out="cont", opt="-O2")
        _, raws = harness.run_program(self.scratch, exe)
        merged, again = self.scratch.path("cont.memprofdata"), self.scratch.path("again.memprofdata")
        harness.memprof_profdata("merge", *raws, f"--profiled-binary={exe}", "-o", merged)
        harness.memprof_profdata("merge", merged, "-o", again)
        options = ["--memprof-ave-lifetime-cold-threshold=1"]

        def prediction(*inputs):
            text = rc.report(*inputs, *options, "--top=0").stdout
            unmatched = re.search(r"(\d+) allocation calls? \(([^)]*)\) clang cannot match", text)
            verdicts = re.findall(r"  (cold|notcold|hot)( \(call not matched\))?$", text, re.M)
            return report_counts(text), unmatched and unmatched.groups(), sorted(verdicts)

        from_raw = prediction(*raws, f"--profiled-binary={exe}")
        self.assertIsNotNone(from_raw[1])
        self.assertGreaterEqual(int(from_raw[1][0]), 2)
        self.assertEqual(prediction(merged), from_raw)
        self.assertEqual(prediction(again), from_raw)

    def test_demo_example(self):
        demo = rc.Profiled(self.scratch, rc.HOTCOLD, full_schema=False)
        for options in ([], ["memprof-ave-lifetime-cold-threshold=1"]):
            with self.subTest(options=options):
                self.compare(rc.HOTCOLD, demo.indexed, options)


if __name__ == "__main__":
    harness.main()
