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
are counted as calls clang cannot match.  The tool decodes the call
before each leaf with capstone (docs/memprof-profdata.md, "report"), so
without it the test is skipped."""
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
REMARK = re.compile(r"^(\S+:\d+:\d+): remark: (?:call|invoke) in function (\S+) "
                    r"matched alloc context with alloc type (\w+)", re.M)


def capstone_built():
    try:
        tool = harness.profdata_tool()
    except FileNotFoundError:
        return False
    return "not available" not in harness.run([tool, "check", "--help"]).stdout


def remark_calls(scratch, profile):
    """Calls per verdict as clang-22 matches them: the alloc-context remarks
    of each call (location and function), one verdict per call (the test
    program has no call whose contexts disagree)."""
    flags = [x for o in OPTIONS for x in ("-mllvm", f"-{o}")]
    r = harness.run(["clang++-22", "-O2", "-gmlt", "-fdebug-info-for-profiling",
                     f"-fmemory-profile-use={profile}", *flags, "-Rpass=memprof",
                     "-S", "-emit-llvm", SRC, "-o", scratch.path("use.ll")])
    types = collections.defaultdict(set)
    for loc, fn, kind in REMARK.findall(r.stderr):
        types[(loc, fn)].add(kind)
    assert all(len(t) == 1 for t in types.values()), types
    return collections.Counter(next(iter(t)) for t in types.values())


def predicted(*inputs):
    """(calls per verdict, calls clang cannot match) of the text report."""
    text = rc.report(*inputs, *[f"--{o}" for o in OPTIONS]).stdout
    m = re.search(r"clang-22: calls cold=(\d+) notcold=(\d+) hot=(\d+) ambiguous=(\d+);", text)
    assert m, text
    calls = +collections.Counter(dict(zip(["cold", "notcold", "hot", "ambiguous"],
                                          map(int, m.groups()))))
    unmatched = re.search(r"(\d+) allocation calls? \([^)]*\) clang cannot match", text)
    return calls, int(unmatched.group(1)) if unmatched else 0


@unittest.skipUnless(capstone_built(), "memprof-profdata built without capstone")
class TailCalls(harness.ProfTest):
    def test_prediction_equals_clang_remarks(self):
        exe = harness.compile_program(self.scratch, SRC, out="tail", opt="-O2",
                                      cflags=["-foptimize-sibling-calls"])
        dis = harness.run(["objdump", "-d", "--no-show-raw-insn", exe]).stdout
        # the wrapper is a tail jump, as in a build without our test flags
        self.assertRegex(dis, r"<_Z9new_blockm>:\n(?:.*\n){0,4}.*\tjmp +[0-9a-f]+ <_Znam>")
        _, raws = harness.run_program(self.scratch, exe, env=rc.FP_ONLY)
        merged = self.scratch.path("tail.memprofdata")
        again = self.scratch.path("again.memprofdata")
        harness.memprof_profdata("merge", *raws, f"--profiled-binary={exe}", "-o", merged)
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


if __name__ == "__main__":
    harness.main()
