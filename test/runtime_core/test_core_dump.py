"""Runtime core: explicit dumps, profile reset, text formats, output naming
and options.  Every expected count is derived from the program text
(-O0: one instrumented access per source-level load/store of heap data):
progs/dump_and_reset.c and progs/reset_truncates.c."""
import glob
import os
import re

import harness
from harness import read_raw

DUMP = "dump_and_reset.c"  # in progs/

class DumpTest(harness.ProfTest):
    def build(self, name=DUMP, defines=()):
        """progs/`name` built with -D`defines`; self.marks: its sites."""
        self.marks = harness.marked_sites(harness.prog_text(__file__, name))
        return harness.compile_program(self.scratch, harness.prog_path(__file__, name),
                                       cflags=[f"-D{d}" for d in defines])

    def test_explicit_dump_then_exit_dump(self):
        exe = self.build()
        _, profs = harness.run_program(self.scratch, exe)
        self.assertEqual(len(profs), 1)
        dumps = read_raw(profs[0])
        self.assertEqual(len(dumps), 2)  # explicit dump + exit dump, appended
        first, second = harness.mibs_by_size(dumps[0]), harness.mibs_by_size(dumps[1])
        self.assertEqual(first[100]["TotalAccessCount"], 100)
        self.assertEqual(first[40]["TotalAccessCount"], 10)
        # The table is emptied by a dump: the freed block is not repeated,
        # the live one is reported again with its accesses so far.
        self.assertNotIn(100, second)
        self.assertEqual(second[40]["TotalAccessCount"], 15)
        self.assertEqual(second[40]["AllocCount"], 1)
        # Same stack id for the live block in both dumps, same PCs.
        lid = [i for i, m in dumps[0]["mibs"].items() if m["TotalSize"] == 40][0]
        self.assertIn(lid, dumps[1]["mibs"])
        self.assertEqual(dumps[0]["stacks"][lid], dumps[1]["stacks"][lid])
        # llvm-profdata merges both dumps of the live block.
        sites = harness.llvm_show_raw(profs[0], exe)
        live = harness.site_by_line(sites, *self.marks["live"])
        self.assertEqual(live["mib"]["AllocCount"], 2)
        self.assertEqual(live["mib"]["TotalAccessCount"], 25)
        freed = harness.site_by_line(sites, *self.marks["freed"])
        self.assertEqual(freed["mib"]["TotalAccessCount"], 100)
        self.assertEqual(freed["mib"]["TotalSize"], 100)

    def test_reset_starts_new_file(self):
        exe = self.build()
        prefix = self.scratch.path("out")
        moved = self.scratch.path("first.raw")
        # `exec` keeps the shell's pid, so the program knows its file name.
        harness.run(["sh", "-c", f'exec "{exe}" "{prefix}.$$" "{moved}"'],
                    env=dict(os.environ, MEMPROF_OPTIONS=f"log_path={prefix}"))
        first = read_raw(moved)
        self.assertEqual(len(first), 1)
        self.assertEqual(harness.mibs_by_size(first[0])[40]["TotalAccessCount"], 10)
        newer = glob.glob(prefix + ".*")
        self.assertEqual(len(newer), 1)
        second = read_raw(newer[0])
        self.assertEqual(len(second), 1)  # truncated and started afresh
        self.assertEqual(harness.mibs_by_size(second[0])[40]["TotalAccessCount"], 15)

    def test_reset_without_rename_truncates(self):
        exe = self.build("reset_truncates.c")
        _, profs = harness.run_program(self.scratch, exe)
        self.assertEqual(len(profs), 1)
        # The first dump was truncated away: the second explicit dump and
        # the exit dump remain.
        dumps = [{k: m["TotalAccessCount"] for k, m in harness.mibs_by_size(d).items()}
                 for d in read_raw(profs[0])]
        self.assertEqual(dumps, [{200: 20, 40: 15}, {40: 15}])
        sites = harness.llvm_show_raw(profs[0], exe)
        live = harness.site_by_line(sites, *self.marks["live"])
        self.assertEqual((live["mib"]["AllocCount"], live["mib"]["TotalAccessCount"]),
                         (2, 30))

    def test_text_format(self):
        exe = self.build()
        r, profs = harness.run_program(
            self.scratch, exe, env={"MEMPROF_OPTIONS": "print_text=1:log_path=stdout"})
        self.assertEqual(profs, [])
        out = r.stdout.decode()
        self.assertEqual(out.count("Recorded MIBs (incl. live on exit):\n"), 2)
        blocks = re.findall(
            r"Memory allocation stack id = (\d+)\n"
            r"\talloc_count (\d+), size \(ave/min/max\) ([\d.]+) / (\d+) / (\d+)\n"
            r"\taccess_count \(ave/min/max\): ([\d.]+) / (\d+) / (\d+)\n"
            r"\tlifetime \(ave/min/max\): \d+\.\d\d / \d+ / \d+\n"
            r"\tnum migrated: \d+, num lifetime overlaps: 0, num same alloc cpu: 0, "
            r"num same dealloc_cpu: 0\n"
            r"AccessCountHistogram\[0\]: \n", out)
        got = [b[1:] for b in blocks]
        self.assertEqual(got, [("1", "100.00", "100", "100", "100.00", "100", "100"),
                               ("1", "40.00", "40", "40", "10.00", "10", "10"),
                               ("1", "40.00", "40", "40", "15.00", "15", "15")])
        # LLVM's frames: #0 the allocation function, then the call site,
        # named by llvm-symbolizer (file:line:column) or, without one, by
        # the symbol table (module+offset).
        for sid in {b[0] for b in blocks}:
            # (the runtime itself has a source location when built with -g)
            self.assertRegex(out, rf"Stack for id {sid}:\n    #0 0x[0-9a-f]{{12}} in malloc "
                                  rf"(\(\S+\+0x[0-9a-f]+\)|\S+/rt_malloc\.c:\d+:\d+)\n"
                                  rf"    #1 0x[0-9a-f]{{12}} in main "
                                  rf"(\S+/{re.escape(DUMP)}:\d+:\d+|\(\S+\+0x[0-9a-f]+\))\n")

    def test_terse_format(self):
        exe = self.build()
        r, _ = harness.run_program(
            self.scratch, exe,
            env={"MEMPROF_OPTIONS": "print_text=1,print_terse=1,log_path=stdout"})
        out = r.stdout.decode()
        self.assertNotIn("Recorded MIBs", out)
        lines = re.findall(r"^MIB:(\d+)/(.*)$", out, re.M)
        self.assertEqual(len(lines), 3)
        pat = r"1/{s}.00/{s}/{s}/{a}.00/{a}/{a}/\d+\.\d\d/\d+/\d+/\d+/0/0/0"
        self.assertRegex(lines[0][1], pat.format(s=100, a=100))
        self.assertRegex(lines[1][1], pat.format(s=40, a=10))
        self.assertRegex(lines[2][1], pat.format(s=40, a=15))

    def test_dump_at_exit_off_and_unknown_option(self):
        exe = self.build()
        r, profs = harness.run_program(
            self.scratch, exe,
            env={"MEMPROF_OPTIONS": "dump_at_exit=0 bogus_flag=1 bogus_flag=2"})
        self.assertEqual(len(profs), 1)
        self.assertEqual(len(read_raw(profs[0])), 1)  # only the explicit dump
        err = r.stderr.decode()
        self.assertEqual(err.count("unknown option 'bogus_flag'"), 2)  # once per use
        self.assertEqual(err.count("MemProfiler"), 2)

    def test_default_options_and_env_precedence(self):
        exe = self.build(defines=['DEFAULT_OPTIONS="print_text=1:log_path=stdout"'])
        r, profs = harness.run_program(self.scratch, exe)
        self.assertEqual(profs, [])
        self.assertEqual(r.stdout.decode().count("Recorded MIBs"), 2)
        # MEMPROF_OPTIONS is parsed after the defaults and wins.
        r, profs = harness.run_program(self.scratch, exe,
                                       env={"MEMPROF_OPTIONS": "print_text=0:log_path="})
        self.assertEqual(len(profs), 1)
        self.assertEqual(len(read_raw(profs[0])), 2)

    def test_output_naming(self):
        exe = self.build()
        pre = self.scratch.path("sub", "dir", "prof")
        harness.run_program(self.scratch, exe, env={
            "MEMPROF_OPTIONS": f"log_path={pre}:log_exe_name=1:log_suffix=.raw"})
        files = glob.glob(pre + ".*")
        self.assertEqual(len(files), 1)
        self.assertRegex(os.path.basename(files[0]), r"^prof\.prog\.\d+\.raw$")
        self.assertEqual(oct(os.stat(files[0]).st_mode & 0o777), oct(0o660 & ~self.umask()))
        self.assertEqual(len(read_raw(files[0])), 2)

    def test_unwritable_output_keeps_exit_code(self):
        exe = self.build(defines=["EXIT_CODE=7"])
        r, _ = harness.run_program(self.scratch, exe, check=False,
                                   env={"MEMPROF_OPTIONS": "log_path=/dev/null/x/y"})
        self.assertEqual(r.returncode, 7)
        self.assertEqual(r.stderr.decode().count("ERROR"), 1)
        self.assertIn("Can't create directory: /dev/null", r.stderr.decode())

    def test_unwritable_output_fails_a_successful_exit(self):
        # LLVM's runtime dies with status 1; ours lets the program finish,
        # then exits 1 instead of 0, its stdout flushed.  Both dumps (the
        # explicit one and the exit one) fail; one message.
        exe = self.build(defines=["PRINT_DONE"])  # prints "done" before it returns
        for opts in ("log_path=/proc/self/mem", "log_path=/dev/null/x/y"):
            r, _ = harness.run_program(self.scratch, exe, check=False,
                                       env={"MEMPROF_OPTIONS": opts})
            self.assertEqual(r.returncode, 1, opts)
            self.assertEqual(r.stdout, b"done\n", opts)
            self.assertEqual(r.stderr.decode().count("ERROR"), 1, opts)

    @staticmethod
    def umask():
        m = os.umask(0)
        os.umask(m)
        return m


if __name__ == "__main__":
    harness.main()
