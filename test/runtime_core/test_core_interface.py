"""Runtime core: the public interface beyond dumping - sanitizer allocator
queries, malloc/free hooks (weak definitions and installed pairs),
allocator statistics (atexit=1 and __memprof_print_accumulated_stats),
help=1, and the access-recording entry points with exact shadow effects
(progs/allocator_interface.c)."""
import re

import harness
from harness import read_raw

IFACE = harness.prog_path(__file__, "allocator_interface.c")


class InterfaceTest(harness.ProfTest):
    def test_allocator_interface_and_hooks(self):
        exe = harness.compile_program(self.scratch, IFACE)
        r, profs = harness.run_program(self.scratch, exe)
        out = r.stdout.decode()
        self.assertIn("size 123 300000\n", out)
        self.assertIn("own 1 0 0 1\n", out)
        self.assertIn("begin 1 1\n", out)
        self.assertIn("bytes 300123\n", out)
        self.assertIn("est 77\n", out)
        # printf's stdout buffer is a third allocation seen by the hooks.
        self.assertRegex(out, r"hooks 3 2 3 2\n")
        self.assertIn("size-after 0\n", out)
        (d,) = read_raw(profs[0])
        by = {m["TotalSize"]: m for m in d["mibs"].values()}
        self.assertEqual(by[123]["TotalAccessCount"], 4)
        self.assertEqual(by[300000]["TotalAccessCount"], 0)

    def test_stats_and_help(self):
        exe = harness.compile_program(self.scratch, IFACE)
        r, _ = harness.run_program(self.scratch, exe, env={
            "MEMPROF_OPTIONS": "atexit=1:help=1:log_path=stderr:print_text=1"})
        err = r.stderr.decode()
        self.assertIn("Available flags for MemProfiler:", err)
        for flag in ("log_path", "print_text", "dump_at_exit", "raw_version", "handle_abort"):
            self.assertRegex(err, rf"\n\t{flag}\n")
        self.assertIn("MemProfiler exit stats:\n", err)
        m = re.search(r"Stats: \d+M malloced \(\d+M for overhead\) by (\d+) calls", err)
        self.assertEqual(int(m.group(1)), 3)
        m = re.search(r"Stats: \d+M freed by (\d+) calls", err)
        self.assertEqual(int(m.group(1)), 2)
        # The stats come before the exit profile.
        self.assertLess(err.index("MemProfiler exit stats:"), err.index("Recorded MIBs"))


if __name__ == "__main__":
    harness.main()
