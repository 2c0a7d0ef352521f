"""test_rt_libc_semantics.py - our interceptors compute what glibc computes.

The runtime does the work of the str*/mem* interceptors itself; a program
(progs/libc_semantics.c) that exercises them on edge cases (empty strings, no match, overlap, case,
bounds, all byte values, numeric conversions with errno) prints every result, relative offsets instead of
pointers.  Linked with our runtime it must print exactly what it prints
when built without any runtime (glibc's functions).
"""
import unittest

import harness


class LibcSemantics(harness.ProfTest):
    def test_same_results_as_glibc(self):
        src = harness.prog_path(__file__, "libc_semantics.c")
        ref = self.scratch.path("ref")
        harness.run(["clang-22", "-O0", "-w", src, "-o", ref])
        want = harness.run_program(self.scratch, ref)[0].stdout
        exe = harness.compile_program(self.scratch, src, cflags=["-w"])
        got = harness.run_program(self.scratch, exe)[0].stdout
        self.assertGreater(len(want.splitlines()), 300)
        self.assertEqual(got.splitlines(), want.splitlines())


if __name__ == "__main__":
    harness.main()
