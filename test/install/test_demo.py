"""scripts/demo.sh, the README's first command, runs end to end against a
build named by an absolute MEMPROF_BUILD_DIR (the scripts used to prefix it
with the tree's path, so only relative folders worked): our runtime profiles
examples/hotcold, our tool merges the profile and reports on it, clang-22
rebuilt with it marks the one cold and the one not-cold allocation context,
as the report said it would, and the LTO build with hot/cold operator new
and libmemprof-hotcold serves the cold buffer, and only it, from the cold
arena (and `check` finds its hint); the same LTO build with the cold
threshold given to the linker plugin instead serves nothing cold, which
`check` explains."""
import os
import re

import harness


class Demo(harness.ProfTest):
    def test_demo_with_absolute_build_dir(self):
        out = self.scratch.path("demo")
        env = dict(os.environ, MEMPROF_BUILD_DIR=os.path.abspath(harness.BUILD),
                   MEMPROF_DEMO_OUT=out)
        r = harness.run([os.path.join(harness.ROOT, "scripts", "demo.sh")], env=env)
        text = r.stdout
        self.assertIn(f"demo: done; files in {out}", text)
        self.assertTrue(os.path.isfile(os.path.join(out, "hotcold.memprofdata")))
        # step 4, the report: the hot site's 1000 blocks and the cold site's
        # one, and the verdicts clang then gives in step 5
        counts = sorted(int(n) for n in re.findall(
            r"^\s+\d+\s+\S+ \S+\s+\S+%\s+(\d+) ", text, re.M))
        # and printf's stdout buffer, allocated in libc for main (the runtime
        # unwinds libc's frames by their tables to main): from the raw
        # profile the report knows that call for a library's, which clang
        # does not mark either
        self.assertEqual(counts, [1, 1, 1000])
        self.assertIn("1 allocation call (4.00 KiB) clang cannot match", text)
        # the timeline beside the raw profile: the peak holds the cold buffer
        # (times from the process's start: "at 604 ms of 1.21 s")
        self.assertRegex(text, r"\n  peak live heap +\S+ MiB \(\d+\) in \d+ blocks at "
                               r"\d+(\.\d+)? m?s of \d+(\.\d+)? m?s\n")
        self.assertRegex(text, r"\nLive at the peak: .*\n.*\n +1 +1048576 ")
        self.assertIn("clang-22: calls cold=0 notcold=0 hot=0 ambiguous=1; "
                      "mib cold=1 notcold=1", text)
        # step 5: clang's attributes, as `uniq -c` prints them
        marks = dict((m, int(n)) for n, m in
                     re.findall(r'^\s+(\d+) (!"(?:cold|notcold|hot)")$', text, re.M))
        self.assertEqual(marks, {'!"cold"': 1, '!"notcold"': 1})
        # step 8: the library's statistics
        hints = {int(h): (int(a), int(b), int(ca)) for h, a, b, ca in re.findall(
            r"^memprof-hotcold: hint=(\d+) class=\w+ allocs=(\d+) bytes=(\d+) "
            r"cold_arena_allocs=(\d+) ", text, re.M)}
        self.assertEqual(hints, {1: (1, 1 << 20, 1), 128: (1000, 256000, 0)})
        self.assertRegex(text, r"memprof-hotcold: cold_arena state=on .* allocs=1 frees=1 "
                               r"live_bytes=0 ")
        # step 9: check finds the cold buffer's hint in the LTO clone
        if "== 9. check: skipped" not in text:
            self.assertIn("  cold contexts    1 (1.00 MiB): 1 reached a cold hint "
                          "(1.00 MiB), 0 did not\n", text)
        self.check_lto_threshold_place(out)

    def check_lto_threshold_place(self, out):
        """docs/hotcold.md: with LTO the cold threshold goes on the compile
        command; given to the linker plugin instead it changes nothing (the
        profile is matched, and each context's hint decided, when each
        file is compiled), so the cold buffer is not served cold."""
        src = os.path.join(harness.ROOT, "examples", "hotcold", "hotcold.cc")
        obj, exe = os.path.join(out, "late.o"), os.path.join(out, "late")
        harness.run(["clang++-22", "-O2", "-flto", "-gmlt", "-fdebug-info-for-profiling",
                     f"-fmemory-profile-use={os.path.join(out, 'hotcold.memprofdata')}",
                     "-c", src, "-o", obj])
        harness.run(["clang++-22", "-O2", "-flto", "-fuse-ld=gold", obj, "-o", exe,
                     "-Wl,-plugin-opt=-enable-memprof-context-disambiguation",
                     "-Wl,-plugin-opt=-supports-hot-cold-new",
                     "-Wl,-plugin-opt=-optimize-hot-cold-new",
                     "-Wl,-plugin-opt=-optimize-existing-hot-cold-new",
                     "-Wl,-plugin-opt=-memprof-ave-lifetime-cold-threshold=1",
                     "-Wl,--whole-archive", harness.find_built("libmemprof-hotcold.a"),
                     "-Wl,--no-whole-archive", "-lpthread", "-ldl", "-lm"])
        r, _ = harness.run_program(self.scratch, exe,
                                   env={"MEMPROF_HOTCOLD_OPTIONS": "stats=1"})
        self.assertRegex(r.stderr.decode(), r"memprof-hotcold: class=cold allocs=0 bytes=0\n")
        # and check, given the threshold the build should have had, says so
        c = harness.run([harness.profdata_tool(), "check",
                         os.path.join(out, "hotcold.memprofdata"), exe,
                         "--memprof-ave-lifetime-cold-threshold=1"], check=False)
        if "not available" not in c.stderr:
            self.assertIn("    call_not_cold        1 context, 1048576 bytes\n", c.stdout)


if __name__ == "__main__":
    harness.main()
