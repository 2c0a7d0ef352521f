"""test_rt_huge_tables.py - huge_tables (runtime/base/rt_ialloc.c): the
runtime's 64 GiB reservation for its permanent tables (stack depot,
contexts) asks for transparent huge pages past its first 512 KiB
(MADV_HUGEPAGE, which /proc/self/smaps lists as the VmFlag "hg"), and with
huge_tables=0 does not.  progs/huge_tables.c prints "hg" or "nohg" for each
mapping of that size; exactly one is expected, preloaded and linked.
"""
import os
import unittest

import harness
import rt_common

THP = os.path.isdir("/sys/kernel/mm/transparent_hugepage")


class HugeTables(harness.ProfTest):
    def preloaded(self, options):
        exe = self.scratch.path("plain")
        if not os.path.exists(exe):
            harness.run(["clang-22", "-O0", "-g", rt_common.prog("huge_tables.c"), "-o", exe])
        r, raws = harness.run_program(self.scratch, exe, env={
            "LD_PRELOAD": harness.find_built("libmemprof.so"),
            "MEMPROF_OPTIONS": options})
        self.assertEqual(len(raws), 1)
        return r.stdout.decode().split()

    @unittest.skipUnless(THP, "kernel without transparent huge pages")
    def test_default_asks_for_huge_pages(self):
        self.assertEqual(self.preloaded(""), ["hg"])

    def test_off(self):
        self.assertEqual(self.preloaded("huge_tables=0"), ["nohg"])

    @unittest.skipUnless(THP, "kernel without transparent huge pages")
    def test_linked(self):
        exe = harness.compile_program(self.scratch, rt_common.prog("huge_tables.c"),
                                      out="linked")
        for options, want in (("", ["hg"]), ("huge_tables=0", ["nohg"])):
            r, raws = harness.run_program(self.scratch, exe,
                                          env={"MEMPROF_OPTIONS": options})
            self.assertEqual(len(raws), 1)
            self.assertEqual(r.stdout.decode().split(), want, options)


if __name__ == "__main__":
    harness.main()
