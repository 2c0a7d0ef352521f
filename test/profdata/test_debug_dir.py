"""--debug-dir: a stripped binary whose DWARF sits in a separate debug file
(DIR/.build-id/xx/rest.debug) symbolizes to the same profile as the
unstripped binary; without the debug dir nothing symbolizes and the merge
fails with a clear message."""
import os
import shutil

import harness

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs", "inline.cc")


class DebugDir(harness.ProfTest):
    def test_separate_debug_file(self):
        s = self.scratch
        exe = harness.compile_program(s, SRC, runtime="llvm", opt="-O2")
        _, raws = harness.run_program(s, exe, args=["10"])
        full = harness.memprof_profdata("show", raws[0], f"--profiled-binary={exe}").stdout

        bid = harness.gnu_build_id(exe)
        dbgdir = s.path("debug", ".build-id", bid[:2])
        os.makedirs(dbgdir)
        harness.run(["objcopy", "--only-keep-debug", exe, os.path.join(dbgdir, bid[2:] + ".debug")])
        stripped = s.path("stripped")
        shutil.copy(exe, stripped)
        harness.run(["strip", "--strip-debug", stripped])

        got = harness.memprof_profdata("show", raws[0], f"--profiled-binary={stripped}",
                                       f"--debug-dir={s.path('debug')}").stdout
        self.assertEqual(got, full)
        self.assertIn("_ZL9inl_allocm", harness.memprof_profdata(
            "show", "--symbolized", raws[0], f"--profiled-binary={stripped}",
            "--debug-dir", s.path("debug")).stdout)

        r = harness.memprof_profdata("merge", raws[0], f"--profiled-binary={stripped}",
                                     "--debug-dir", s.path("nowhere"), "-o", s.path("o"),
                                     check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("debug info", r.stderr)
        self.assertFalse(os.path.exists(s.path("o")))


if __name__ == "__main__":
    harness.main()
