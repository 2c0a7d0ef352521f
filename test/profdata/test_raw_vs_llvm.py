"""Our raw reader builds the same profile as llvm-profdata-22's for a single
raw file: identical contexts with all 26 MIB values (compared with
`llvm-profdata-22 show --memory RAW`), identical call sites (compared with
its indexed output), for raw v5 (clang-22 runtime), raw v4 (clang-19
runtime), raw v3 (rewritten from v4), inline frames (-O2, always_inline) and access histograms."""
import os
import struct

import harness

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs")
HOTCOLD = ("AllocCount", "TotalSize", "TotalLifetime", "TotalLifetimeAccessDensity")


def llvm_raw_contexts(raw, exe):
    """{(record guid, stack): mib} from LLVM's text dump of a raw profile."""
    ctx = {}
    for s in harness.llvm_show_raw(raw, exe):
        stack = tuple((harness.llvm_guid(n), lo, col, bool(inl)) for n, lo, col, inl in s["stack"])
        key = (s["function"], stack)
        assert key not in ctx, f"LLVM lists {key} twice"
        mib = dict(s["mib"])
        mib.pop("AccessHistogram", None)  # a pointer value, meaningless
        ctx[key] = mib
    return ctx


def v4_to_v3(data):
    """One-dump raw v4 profile without histograms -> the same as raw v3."""
    magic, ver, total, seg, mib, stk = struct.unpack_from("<6Q", data, 0)
    assert ver == 4 and total == len(data)
    n = struct.unpack_from("<Q", data, mib)[0]
    out = bytearray(data[:mib]) + struct.pack("<Q", n)
    for i in range(n):
        e = mib + 8 + i * (8 + 144)
        assert struct.unpack_from("<I", data, e + 8 + 132)[0] == 0, "has a histogram"
        out += data[e:e + 8 + 132]
    out += bytes(-len(out) % 8)
    new_stk = len(out)
    out += data[stk:]
    struct.pack_into("<6Q", out, 0, magic, 3, len(out), seg, mib, new_stk)
    return bytes(out)


class RawVsLLVM(harness.ProfTest):
    def check(self, src, rt, llvm=22, opt="-O0", args=(), cflags=(), env=None):
        exe = harness.compile_program(self.scratch, os.path.join(HERE, src),
                                      out=f"p-{rt}-{llvm}", runtime=rt, llvm=llvm,
                                      opt=opt, cflags=cflags)
        _, raws = harness.run_program(self.scratch, exe, args=args, env=env)
        self.assertEqual(len(raws), 1)
        raw = raws[0]
        ours = harness.parse_memprof_yaml(harness.memprof_profdata(
            "show", raw, f"--profiled-binary={exe}").stdout)
        ctx = harness.yaml_contexts(ours)
        for mib in ctx.values():
            mib.pop("AccessHistogram", None)
        self.assertEqual(ctx, llvm_raw_contexts(raw, exe))

        ref = self.scratch.path("ref.memprofdata")
        harness.run(["llvm-profdata-22", "merge", raw, f"--profiled-binary={exe}", "-o", ref])
        theirs = harness.parse_memprof_yaml(
            harness.run(["llvm-profdata-22", "show", "--memory", ref]).stdout)
        self.assertEqual(set(ours), set(theirs), "records")
        self.assertEqual(harness.yaml_callsites(ours), harness.yaml_callsites(theirs))
        self.assertEqual(harness.yaml_contexts(ours, HOTCOLD),
                         harness.yaml_contexts(theirs, HOTCOLD))
        os.unlink(raw)
        return ours

    def test_v5_plain(self):
        for rt in harness.available_runtimes():
            with self.subTest(runtime=rt):
                self.check("contexts.cc", rt, args=["20", "2"])

    def test_v5_inline_frames(self):
        for rt in harness.available_runtimes():
            with self.subTest(runtime=rt):
                ours = self.check("inline.cc", rt, opt="-O2", args=["20"])
                inl, main, mid = (harness.llvm_guid(n) for n in ("_ZL9inl_allocm", "main", "_Z3midm"))
                # an inlined allocation is listed in the inline function's
                # record and in its physical caller's
                self.assertEqual(len(ours[inl]["allocs"]), 2)
                self.assertEqual(len(ours[main]["allocs"]), 1)
                self.assertEqual(len(ours[mid]["allocs"]), 1)
                counts = sorted(m["AllocCount"] for _, m in ours[inl]["allocs"])
                self.assertEqual(counts, [20, 40])
                self.assertTrue(ours[inl]["allocs"][0][0][0][3], "leaf frame is inline")

    def test_v5_histogram(self):
        for rt in harness.available_runtimes():
            with self.subTest(runtime=rt):
                ours = self.check("inline.cc", rt, opt="-O2", args=["20"],
                                  cflags=["-mllvm", "-memprof-histogram"],
                                  env={"MEMPROF_OPTIONS": "histogram=1"})
                sizes = sorted(m["AccessHistogramSize"] for _, m in
                               harness.yaml_contexts(ours).items())
                self.assertEqual(sizes, [4, 4, 8, 8])  # 32 and 64 bytes, 8 per entry

    def test_two_dumps_of_one_process(self):
        # Two copies of a dump in one file (as a process that dumps twice):
        # each context's MIBs merge, exactly as llvm-profdata-22 does it.
        exe = harness.compile_program(self.scratch, os.path.join(HERE, "inline.cc"),
                                      runtime="llvm", opt="-O2")
        _, raws = harness.run_program(self.scratch, exe, args=["10"])
        with open(raws[0], "rb") as f:
            data = f.read()
        two = self.scratch.path("two.profraw")
        with open(two, "wb") as f:
            f.write(data * 2)
        ours = harness.yaml_contexts(harness.parse_memprof_yaml(harness.memprof_profdata(
            "show", two, f"--profiled-binary={exe}").stdout))
        theirs = llvm_raw_contexts(two, exe)
        # mib_merge.h deliberately also sums the incoming MIB's own
        # overlap/same-CPU counters (LLVM only adds 0/1), so skip those
        special = ("AccessHistogram", "NumLifetimeOverlaps", "NumSameAllocCpu",
                   "NumSameDeallocCpu")
        for mib in list(ours.values()) + list(theirs.values()):
            for f in special:
                mib.pop(f, None)
        self.assertEqual(ours, theirs)
        self.assertEqual(sorted(m["AllocCount"] for m in ours.values()), [20, 20, 40, 40])

    def test_v3_rewritten_from_v4(self):
        # No installed runtime writes raw v3 any more: rewrite a v4 file
        # (no histograms) into v3 (132-byte MIBs) and compare as above.
        exe = harness.compile_program(self.scratch, os.path.join(HERE, "inline.cc"),
                                      runtime="llvm", llvm=19, opt="-O2")
        _, raws = harness.run_program(self.scratch, exe, args=["10"])
        with open(raws[0], "rb") as f:
            v4 = f.read()
        v3 = self.scratch.path("v3.profraw")
        with open(v3, "wb") as f:
            f.write(v4_to_v3(v4))
        ours = harness.yaml_contexts(harness.parse_memprof_yaml(harness.memprof_profdata(
            "show", v3, f"--profiled-binary={exe}").stdout))
        theirs = llvm_raw_contexts(v3, exe)
        for mib in list(ours.values()) + list(theirs.values()):
            mib.pop("AccessHistogram", None)
            mib.pop("AccessHistogramSize", None)
        self.assertEqual(ours, theirs)
        self.assertEqual(sorted(m["AllocCount"] for m in ours.values()), [10, 10, 20, 20])

    def test_v4_histogram_from_clang19(self):
        # raw v4 stores histogram entries as u64 (v5: u16)
        ours = self.check("inline.cc", "llvm", llvm=19, opt="-O2", args=["20"],
                          cflags=["-mllvm", "-memprof-histogram"],
                          env={"MEMPROF_OPTIONS": "histogram=1"})
        sizes = sorted(m["AccessHistogramSize"] for m in harness.yaml_contexts(ours).values())
        self.assertEqual(sizes, [4, 4, 8, 8])

    def test_v4_from_clang19(self):
        self.check("contexts.cc", "llvm", llvm=19, args=["20", "2"])


if __name__ == "__main__":
    harness.main()
