"""Allocations reached by a tail jump get the hints clang-22 gives them:
none.  progs/tailcall.cc, built -O2 with sibling calls, builds strings from
a character range (libstdc++.so's basic_string::_M_create ends in `jmp
operator new`) and allocates through a wrapper compiled to `jmp _Znam`;
the unwound stacks of those blocks lack the frame that called operator
new, so their leaf frame is the call of _M_create or of the wrapper, which
clang does not match (it matches calls of operator new).  The report's
predicted calls per verdict equal those clang's -Rpass=memprof remarks
show matched (each call's contexts' types), from the raw profile, from
the merged file and from a merge of that, and the tail-called contexts
are counted as calls clang cannot match.

clang matches after only its pre-inliner: on progs/containers.cc it finds
vector and deque-map growth in a not yet inlined
__new_allocator<T>::allocate, one call for several callers.  The number
of calls its remarks show lies between the report's calls (as the
profiled build inlined) and the report's count had nothing been inlined,
and the report says how many of its calls are inlined allocations.  On
progs/nodes.cc it lies strictly between: clang leaves set and
unordered_map nodes (a constant size) in a libstdc++ function the
profiled build inlined into both callers, and a vector reserved with a
constant in __new_allocator<T>::allocate, with the growth of another.

The tool decodes the call before each leaf with capstone
(docs/memprof-profdata.md, "report"), so without it the tests are
skipped."""
import collections
import os
import re
import unittest

import harness
import report_common as rc

SRC = os.path.join(rc.HERE, "progs", "tailcall.cc")
# the kept blocks are written once (the strings' characters are copied in):
# a density threshold of 1 makes the ones kept across the sleep cold
OPTIONS = ["memprof-ave-lifetime-cold-threshold=1",
           "memprof-lifetime-access-density-cold-threshold=1"]
# under the lifetime threshold alone every context of the container
# programs is not cold
LIFETIME_ONLY = ["memprof-ave-lifetime-cold-threshold=1"]
REMARK = re.compile(r"^(\S+:\d+:\d+): remark: (?:call|invoke) in function (\S+) "
                    r"matched alloc context with alloc type (\w+)", re.M)


def capstone_built():
    try:
        tool = harness.profdata_tool()
    except FileNotFoundError:
        return False
    return "not available" not in harness.run([tool, "check", "--help"]).stdout


def remark_calls(scratch, profile, src=SRC, options=OPTIONS):
    """Calls per verdict as clang-22 matches them: the alloc-context remarks
    of each call (location and function), one verdict per call (the test
    programs have no call whose contexts disagree)."""
    flags = [x for o in options for x in ("-mllvm", f"-{o}")]
    r = harness.run(["clang++-22", "-O2", "-gmlt", "-fdebug-info-for-profiling",
                     f"-fmemory-profile-use={profile}", *flags, "-Rpass=memprof",
                     "-S", "-emit-llvm", src, "-o", scratch.path("use.ll")])
    types = collections.defaultdict(set)
    for loc, fn, kind in REMARK.findall(r.stderr):
        types[(loc, fn)].add(kind)
    assert all(len(t) == 1 for t in types.values()), types
    return collections.Counter(next(iter(t)) for t in types.values())


def counts(values):
    return +collections.Counter(dict(zip(["cold", "notcold", "hot", "ambiguous"],
                                         map(int, values))))


def predicted(*inputs):
    """(calls per verdict, calls clang cannot match) of the text report."""
    text = rc.report(*inputs, *[f"--{o}" for o in OPTIONS]).stdout
    m = re.search(r"clang-22: calls cold=(\d+) notcold=(\d+) hot=(\d+) ambiguous=(\d+);", text)
    assert m, text
    unmatched = re.search(r"(\d+) allocation calls? \([^)]*\) clang cannot match", text)
    return counts(m.groups()), int(unmatched.group(1)) if unmatched else 0


def pre_inliner(*inputs, options=OPTIONS):
    """(calls per verdict, inlined allocation calls, calls per verdict
    inlining none) of the text report; the last two None when it has no
    inlined call."""
    text = rc.report(*inputs, *[f"--{o}" for o in options]).stdout
    calls = re.search(r"clang-22: calls cold=(\d+) notcold=(\d+) hot=(\d+) ambiguous=(\d+);", text)
    m = re.search(r"(\d+) of the calls are allocations the profiled build inlined.*"
                  r"inlining none: calls cold=(\d+) notcold=(\d+) hot=(\d+) "
                  r"ambiguous=(\d+)", text)
    return (counts(calls.groups()), m and int(m.group(1)),
            m and counts(m.groups()[1:]))


@unittest.skipUnless(capstone_built(), "memprof-profdata built without capstone")
class TailCalls(harness.ProfTest):
    def profiled(self, src, name):
        """(binary, raw profiles, merged profile) of `src` built -O2."""
        exe = harness.compile_program(self.scratch, src, out=name, opt="-O2",
                                      cflags=["-foptimize-sibling-calls"])
        _, raws = harness.run_program(self.scratch, exe, env=rc.FP_ONLY)
        merged = self.scratch.path(name + ".memprofdata")
        harness.memprof_profdata("merge", *raws, f"--profiled-binary={exe}", "-o", merged)
        return exe, raws, merged

    def test_prediction_equals_clang_remarks(self):
        exe, raws, merged = self.profiled(SRC, "tail")
        dis = harness.run(["objdump", "-d", "--no-show-raw-insn", exe]).stdout
        # the wrapper is a tail jump, as in a build without our test flags
        self.assertRegex(dis, r"<_Z9new_blockm>:\n(?:.*\n){0,4}.*\tjmp +[0-9a-f]+ <_Znam>")
        again = self.scratch.path("again.memprofdata")
        harness.memprof_profdata("merge", merged, "-o", again)

        want = remark_calls(self.scratch, merged)
        # clang matches the new of kept_text's string and kept_node's node
        # (kept: cold) and churn_nodes' nodes (not cold), nothing else
        self.assertEqual(want, collections.Counter(cold=2, notcold=1))
        # 4 contexts are tail-called: kept and churned strings, kept and
        # churned wrapper blocks
        got = predicted(*raws, f"--profiled-binary={exe}")
        self.assertEqual(got, (want, 4))
        self.assertEqual(predicted(merged), got)
        self.assertEqual(predicted(again), got)

    def test_calls_inlined_in_the_profiled_build(self):
        # clang matches after its pre-inliner only: it finds vector<long>'s
        # and deque<int>'s map allocations in __new_allocator<T>::allocate
        # (not inlined yet: one call for two callers each), deque<int>'s
        # node allocations where the profiled build inlined them; the
        # report's calls (as the profiled build inlined) and its calls
        # had the pre-inliner inlined none bound clang's
        exe, raws, merged = self.profiled(rc.CONTAINERS, "cont")
        want = remark_calls(self.scratch, merged, rc.CONTAINERS, LIFETIME_ONLY)
        self.assertEqual(want, collections.Counter(notcold=8))
        got = pre_inliner(merged, options=LIFETIME_ONLY)
        self.assertEqual(got, (collections.Counter(notcold=10), 6,
                               collections.Counter(notcold=7)))
        self.assertLessEqual(got[2].total(), want.total())
        self.assertLessEqual(want.total(), got[0].total())
        self.assertEqual(pre_inliner(*raws, f"--profiled-binary={exe}",
                                     options=LIFETIME_ONLY), got)

    def test_calls_the_pre_inliner_leaves_in_between(self):
        # clang matches set<long>'s nodes in _Rb_tree::_M_insert_ and
        # unordered_map's in _Map_base::operator[] (one call for two
        # callers each, though the size is a constant), the hash buckets
        # and both vectors' (one reserved with a constant) in
        # __new_allocator<T>::allocate, each list's nodes in its caller
        src = os.path.join(rc.HERE, "progs", "nodes.cc")
        _, _, merged = self.profiled(src, "nodes")
        want = remark_calls(self.scratch, merged, src, LIFETIME_ONLY)
        self.assertEqual(want, collections.Counter(notcold=6))
        got = pre_inliner(merged, options=LIFETIME_ONLY)
        self.assertEqual(got, (collections.Counter(notcold=9), 9,
                               collections.Counter(notcold=5)))
        self.assertLess(got[2].total(), want.total())
        self.assertLess(want.total(), got[0].total())


if __name__ == "__main__":
    harness.main()
