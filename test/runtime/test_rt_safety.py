"""Defects that broke real programs, and defaults that must not surprise one.

Each program lives in progs/ and runs under our runtime both linked in (an
instrumented build) and preloaded into a plain build, as users run it:
  - calloc after threads exited returned a dirty slot;
  - a malloc called with junk in %rbp crashed the stack walk;
  - the default configuration starts no thread (unshare(CLONE_NEWUSER)
    needs a single-threaded process); background_thread=1 starts one;
  - a copy of the runtime that is not the process's allocator (a second
    runtime, or the program's own allocator before it) records nothing
    and says so, instead of writing an empty profile over the first
    one's, and hands the blocks it is asked for (strdup's, reallocarray's)
    to that allocator: Chromium crashed on its strdup blocks;
  - a preloaded runtime writes memprof.profraw.<pid>, not a binary profile
    on the program's stderr.
"""
import os

import harness
from rt_common import prog


class Variants(harness.ProfTest):
    """Builds a progs/ program instrumented and linked with our runtime
    ("linked"), and plainly with clang to run with libmemprof.so preloaded
    ("preloaded")."""

    def build(self, src, ldflags=("-lpthread",)):
        linked = harness.compile_program(self.scratch, prog(src), out="linked",
                                         opt="-O1", ldflags=list(ldflags))
        plain = self.scratch.path("plain")
        harness.run(["clang-22", "-O1", "-g", prog(src), "-o", plain, *ldflags])
        return linked, plain

    def run_both(self, src, args=(), env=None, **kw):
        linked, plain = self.build(src, **kw)
        out = {}
        r, raws = harness.run_program(self.scratch, linked, args, env=env)
        out["linked"] = (r, raws)
        pre = dict(env or {})
        pre["LD_PRELOAD"] = harness.find_built("libmemprof.so")
        r, raws = harness.run_program(self.scratch, plain, args, env=pre)
        out["preloaded"] = (r, raws)
        return out


class CallocAfterThreadExit(Variants):
    def test_calloc_is_zeroed_after_threads_exit(self):
        for how, (r, raws) in self.run_both("calloc_after_thread_exit.c").items():
            with self.subTest(how=how):
                self.assertEqual(r.stdout.decode(), "dirty 0\n")
                self.assertEqual(len(raws), 1)


class UnrecordedFrees(Variants):
    """Blocks sampling leaves unrecorded take the allocator's fast paths,
    recorded ones its general paths: the same frees are ignored, calloc
    clears a used slot, realloc keeps the bytes, every call is counted (a
    realloc as a malloc, a free and a realloc), in both."""
    OUT = ("double_free 1\ninterior 1 1\nslot_start 1 1\ncalloc 1\nrealloc 1\n"
           "calls 1501 1501 500\n")

    def test_sampled_and_exact(self):
        for opts in ("sample_interval=1073741824:sample_seed=1:unsampled_to_libc=0", "sample_interval=0"):
            runs = self.run_both("unrecorded_frees.c", env={"MEMPROF_OPTIONS": opts})
            for how, (r, raws) in runs.items():
                with self.subTest(opts=opts, how=how):
                    self.assertEqual(r.stdout.decode(), self.OUT)
                    self.assertEqual(len(raws), 1)


class JunkFramePointer(Variants):
    def test_walk_stops_at_junk_frame_pointers(self):
        for how, (r, raws) in self.run_both("junk_frame_pointer.c").items():
            with self.subTest(how=how):
                self.assertEqual(r.stdout.decode(), "ok 4\n")
                self.assertEqual(len(raws), 1)


class NoHiddenThread(Variants):
    def unshare_allowed(self):
        plain = self.scratch.path("bare")
        harness.run(["clang-22", "-O1", prog("unshare_after_alloc.c"), "-o", plain])
        r = harness.run([plain])
        if "unshare ok" not in r.stdout:
            self.skipTest(f"unshare(CLONE_NEWUSER) fails here without the runtime: {r.stdout}")

    def test_default_starts_no_thread(self):
        self.unshare_allowed()
        for how, (r, _) in self.run_both("unshare_after_alloc.c").items():
            with self.subTest(how=how):
                self.assertEqual(r.stdout.decode(), "tasks 1 unshare ok\n")

    def test_background_thread_is_opt_in(self):
        self.unshare_allowed()
        env = {"MEMPROF_OPTIONS": "background_thread=1"}
        for how, (r, _) in self.run_both("unshare_after_alloc.c", env=env).items():
            with self.subTest(how=how):
                self.assertEqual(r.stdout.decode(), "tasks 2 unshare Invalid argument\n")

    def test_exact_clock_starts_no_thread(self):
        self.unshare_allowed()
        env = {"MEMPROF_OPTIONS": "background_thread=1:exact_clock=1"}
        r, _ = self.run_both("unshare_after_alloc.c", env=env)["linked"]
        self.assertEqual(r.stdout.decode(), "tasks 1 unshare ok\n")


WARNING = "another allocator serves malloc in this process"


class SecondRuntime(harness.ProfTest):
    def build(self, runtime):
        return harness.compile_program(self.scratch, prog("ten_sites.c"),
                                       out=f"ten_{runtime}", runtime=runtime)

    def test_preloaded_copy_stays_inactive(self):
        exe = self.build("ours")
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        r, raws = harness.run_program(self.scratch, exe, env=env)
        self.assertIn(WARNING, r.stderr.decode())
        self.assertEqual(len(raws), 1)
        sites = harness.llvm_show_raw(raws[0], exe)
        # printf's stdout buffer (libc's) is a site of its own: only ours
        counts = [s["mib"]["AllocCount"] for s in sites if s["mib"]["TotalSize"] == 1045]
        self.assertEqual(counts, [10])

    def test_preloaded_into_llvms_runtime(self):
        exe = self.build("llvm")
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        r, raws = harness.run_program(self.scratch, exe, env=env)
        self.assertEqual(r.stdout.decode(), "ok\n")
        self.assertIn(WARNING, r.stderr.decode())
        self.assertEqual(len(raws), 1)
        sites = harness.llvm_show_raw(raws[0], exe)
        counts = [s["mib"]["AllocCount"] for s in sites if s["mib"]["TotalSize"] == 1045]
        self.assertEqual(counts, [10])

    def test_non_pie_program_taking_mallocs_address(self):
        # Its PLT entry is malloc's address for every module: this copy is
        # still the one that serves malloc, and must say nothing.
        exe = self.scratch.path("nopie")
        harness.run(["clang-22", "-O1", "-no-pie", "-fno-pic", prog("takes_mallocs_address.c"),
                     "-o", exe])
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        r, raws = harness.run_program(self.scratch, exe, env=env)
        self.assertEqual((r.stdout.decode(), r.stderr.decode()), ("ok\n", ""))
        prof = harness.read_raw(raws[0])[0]
        self.assertIn(64, [m["MaxSize"] for m in prof["mibs"].values()])

    def test_programs_own_allocator(self):
        exe = self.scratch.path("own")
        harness.run(["clang-22", "-O1", prog("own_allocator.c"), "-o", exe])
        plain, _ = harness.run_program(self.scratch, exe)
        self.assertEqual(plain.stdout.decode(), "hello wor\nforeign 0\n")
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        r, raws = harness.run_program(self.scratch, exe, env=env, check=False)
        self.assertEqual((r.returncode, r.stdout), (0, plain.stdout))
        self.assertIn(WARNING, r.stderr.decode())
        self.assertEqual(raws, [])

    def test_single_runtime_says_nothing(self):
        exe = self.build("ours")
        r, _ = harness.run_program(self.scratch, exe)
        self.assertEqual(r.stderr.decode(), "")


class PreloadedProfileFile(harness.ProfTest):
    def test_preloaded_program_writes_a_file(self):
        plain = self.scratch.path("plain")
        harness.run(["clang-22", "-O1", prog("ten_sites.c"), "-o", plain])
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so"), "MEMPROF_OPTIONS": ""}
        r, raws = harness.run_program(self.scratch, plain, env=env)
        self.assertEqual(r.stderr, b"")
        self.assertEqual(len(raws), 1)
        self.assertRegex(os.path.basename(raws[0]), r"^memprof\.profraw\.\d+$")
        prof = harness.read_raw(raws[0])[0]
        ours = [m for m in prof["mibs"].values()
                if (m["MinSize"], m["MaxSize"]) == (100, 109)]
        self.assertEqual([(m["AllocCount"], m["TotalSize"]) for m in ours], [(10, 1045)])


if __name__ == "__main__":
    harness.main()
