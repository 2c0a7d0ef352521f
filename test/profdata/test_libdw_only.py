"""--libdw-only turns off the symbolizer's raw DWARF readers (sym_scan.c's
function trees, sym_lines.c's line rows) and reads everything through
libdw: merge, show and report give the same bytes either way, for DWARF 5
and DWARF 4 units with inline frames, and for a program of many contexts."""
import os

import harness

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs")


class LibdwOnly(harness.ProfTest):
    def same_either_way(self, src, cflags=(), args=()):
        exe = harness.compile_program(self.scratch, os.path.join(HERE, src),
                                      opt="-O2", cflags=cflags)
        _, raws = harness.run_program(self.scratch, exe, args=args)
        outs = {}
        for mode in ((), ("--libdw-only",)):
            out = self.scratch.path("m%d.memprofdata" % len(mode))
            harness.memprof_profdata("merge", *raws, f"--profiled-binary={exe}",
                                     "-o", out, *mode)
            with open(out, "rb") as f:
                merged = f.read()
            show = harness.memprof_profdata("show", "--symbolized", out).stdout
            report = harness.memprof_profdata("report", *raws,
                                              f"--profiled-binary={exe}", *mode).stdout
            outs[mode] = (merged, show, report)
        self.assertEqual(outs[()], outs[("--libdw-only",)])
        self.assertIn(":", outs[()][1])  # symbolized: file:line present
        return outs[()]

    def test_inline_frames_dwarf5(self):
        show = self.same_either_way("inline.cc")[1]
        self.assertIn("inl_alloc", show)

    def test_inline_frames_dwarf4(self):
        self.same_either_way("inline.cc", cflags=("-gdwarf-4",))

    def test_many_contexts(self):
        self.same_either_way("many_contexts.cc")


if __name__ == "__main__":
    harness.main()
