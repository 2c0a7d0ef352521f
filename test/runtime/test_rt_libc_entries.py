"""test_rt_libc_entries.py - glibc's own names of its allocator entry points
(__libc_malloc, __libc_calloc, __libc_realloc, __libc_free,
__libc_memalign, __libc_valloc, __libc_pvalloc) are the runtime's too.
glibc exports them and programs and libraries call them; if they stayed
glibc's, a block from malloc freed with __libc_free would reach glibc's
free ("free(): invalid pointer", abort) and a block from __libc_malloc
would be freed by ours without ever being counted.

libc_entries.c mixes the two families; linked with our runtime, and
preloaded into a plain build of it, it must exit 0 printing what it
prints on glibc's malloc, and the profile must count ROUNDS allocations
at each of its site_* functions.
"""
import os
import subprocess

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "libc_entries.c")
ROUNDS = 5  # libc_entries.c's
SITES = ["site_malloc", "site_libc_malloc", "site_libc_calloc", "site_libc_realloc",
         "site_libc_memalign", "site_libc_valloc", "site_libc_pvalloc"]


class LibcEntries(harness.ProfTest):
    def run_and_count(self, exe, env):
        log = self.scratch.path("prof")
        r = subprocess.run([exe], env=dict(os.environ, MEMPROF_OPTIONS=f"log_path={log}", **env),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        profs = [f for f in os.listdir(self.scratch.dir) if f.startswith("prof.")]
        self.assertEqual(len(profs), 1, profs)
        shown = harness.memprof_profdata("show", self.scratch.path(profs[0]),
                                         f"--profiled-binary={exe}")
        self.assertEqual(harness.leaf_alloc_counts(shown.stdout, SITES),
                         dict.fromkeys(SITES, ROUNDS))
        return r.stdout

    def plain_build(self):
        exe = self.scratch.path("plain")
        harness.run(["clang-22", "-O0", "-g", "-fno-omit-frame-pointer", SRC, "-o", exe])
        return exe, harness.run([exe]).stdout

    def test_linked_runtime(self):
        _, want = self.plain_build()
        exe = harness.compile_program(self.scratch, SRC)
        self.assertEqual(self.run_and_count(exe, {}), want)

    def test_preloaded_runtime(self):
        exe, want = self.plain_build()
        got = self.run_and_count(exe, {"LD_PRELOAD": harness.find_built("libmemprof.so")})
        self.assertEqual(got, want)


if __name__ == "__main__":
    harness.main()
