"""Runtime core: raw profile versions 3/4/5 (read back by llvm-profdata 22
and, for 3/4, by llvm-profdata 19 on clang-19 binaries), histogram mode
(u8 granule counters, saturation, v5 u16 encoding, region padding), and
agreement with LLVM's own runtime where LLVM's counts are exact.  The
programs: progs/basic_sites.c and progs/histogram_sizes.c."""
import os

import harness
from harness import read_raw

BASIC = "basic_sites.c"  # in progs/
# marker -> (TotalSize, TotalAccessCount)
BASIC_EXPECT = {"a": (40, 20), "x": (10, 2), "live": (1000, 125)}
HIST = "histogram_sizes.c"


def encode_v5(c):
    c = min(c, 4095 << 15)
    m, e = c, 0
    while m > 4095:
        m, e = (m + 1) >> 1, e + 1
    return (e << 12) | m


class FormatTest(harness.ProfTest):
    def check_basic(self, sites):
        marks = harness.marked_sites(harness.prog_text(__file__, BASIC))
        for name, (size, count) in BASIC_EXPECT.items():
            s = harness.site_by_line(sites, *marks[name])
            self.assertEqual((s["mib"]["TotalSize"], s["mib"]["TotalAccessCount"]),
                             (size, count), f"@{name}")

    def test_v5_default_and_llvm_agreement(self):
        src = harness.prog_path(__file__, BASIC)
        exe = harness.compile_program(self.scratch, src)
        _, profs = harness.run_program(self.scratch, exe)
        (d,) = read_raw(profs[0])
        self.assertEqual(d["version"], 5)
        self.check_basic(harness.llvm_show_raw(profs[0], exe))
        # LLVM's runtime gives the same counts for these blocks.
        ref = harness.compile_program(self.scratch, src, out="ref", runtime="llvm")
        _, rprofs = harness.run_program(self.scratch, ref)
        self.check_basic(harness.llvm_show_raw(rprofs[-1], ref))

    def test_shared_runtime(self):
        # libmemprof.so (no .preinit_array: initialised by its constructor or
        # the first malloc) gives the same counts as the static archive.
        so = harness.find_built("libmemprof.so")
        libdir = os.path.dirname(so)
        src = harness.prog_path(__file__, BASIC)
        exe = harness.compile_program(
            self.scratch, src, runtime="shadow",
            ldflags=[f"-L{libdir}", "-lmemprof", f"-Wl,-rpath,{libdir}"])
        _, profs = harness.run_program(self.scratch, exe)
        self.check_basic(harness.llvm_show_raw(profs[0], exe))

    def test_v3_v4_with_llvm19(self):
        src = harness.prog_path(__file__, BASIC)
        exe = harness.compile_program(self.scratch, src, llvm=19)
        for v, mib_bytes in ((3, 140), (4, 152)):
            _, profs = harness.run_program(self.scratch, exe,
                                           env={"MEMPROF_OPTIONS": f"raw_version={v}"})
            (d,) = read_raw(profs[-1])
            self.assertEqual(d["version"], v)
            n = len(d["mibs"])
            expect = (8 + n * mib_bytes + 7) // 8 * 8
            self.assertEqual(d["stack_offset"] - d["mib_offset"], expect)
            for tool in (19, 22):
                self.check_basic(harness.llvm_show_raw(profs[-1], exe, llvm=tool))
            os.unlink(profs[-1])

    def test_histogram_v5_and_v4(self):
        src = harness.prog_path(__file__, HIST)
        exe = harness.compile_program(self.scratch, src,
                                      cflags=["-mllvm", "-memprof-histogram"])
        want100 = [9, 255] + [9] * 10 + [5]  # memset adds 1 per granule (our fix)
        merged20 = 100 * 255
        for v in (5, 4):
            _, profs = harness.run_program(self.scratch, exe,
                                           env={"MEMPROF_OPTIONS": f"raw_version={v}"})
            (d,) = read_raw(profs[-1])
            by = {m["MaxSize"]: m for m in d["mibs"].values()}
            self.assertEqual(by[100]["hist"], want100)
            self.assertEqual(by[100]["TotalAccessCount"], sum(want100))
            self.assertEqual(by[20]["AllocCount"], 100)
            self.assertEqual(by[20]["TotalAccessCount"], merged20)
            first = merged20 if v == 4 else harness.decode_v5(encode_v5(merged20))
            self.assertEqual(by[20]["hist"], [first, 0, 0])
            # Long histograms (built outside the small-block fast path),
            # merged across two frees, and a live block at exit.
            self.assertEqual(by[4000]["AllocCount"], 2)
            self.assertEqual(by[4000]["hist"], [2] * 500)
            self.assertEqual(by[3000]["hist"], [1] * 100 + [0] * 275)
            sites = harness.llvm_show_raw(profs[-1], exe)
            marks = harness.marked_sites(harness.prog_text(__file__, HIST))
            self.assertEqual(harness.site_by_line(sites, *marks["p"])["mib"]
                             ["AccessHistogramSize"], 13)
            os.unlink(profs[-1])


if __name__ == "__main__":
    harness.main()
