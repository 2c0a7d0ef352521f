"""test_options_hostile.py - the runtime under hostile MEMPROF_OPTIONS.

A program we do not control may run with any option string.  For each
string below the program must exit 0 (no crash, no hang), and the profile
must still be written and readable with the program's exact counts (7
blocks, 168 bytes at site_opt), except where an option legitimately turns
stacks off.  Runtime: ours unless MEMPROF_STRESS_RUNTIME=llvm.
"""
import os
import subprocess
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.environ.get("MEMPROF_STRESS_RUNTIME", "ours")

# (label, MEMPROF_OPTIONS, counts are checked)
CASES = [
    ("empty", "", True),
    ("separators_only", ":::,,,  \t\n", True),
    ("int_overflow", "malloc_context_size=99999999999", False),
    ("int_overflow_neg", "malloc_context_size=-2147483649", False),
    ("negative_depth", "malloc_context_size=-5", False),
    ("zero_depth", "malloc_context_size=0", False),
    ("bad_raw_version", "raw_version=2", True),
    ("huge_raw_version", "raw_version=4294967301", True),
    ("bad_bools", "print_text=maybe:dump_at_exit=:atexit=2", True),
    ("empty_names", "=1:=:a=b=c:==", True),
    ("unknown_flags", "no_such_flag=1:" + "x" * 300 + "=1", True),
    ("long_suffix", "log_suffix=" + "s" * 1000, True),
    ("non_ascii", "log_exe_name=\u00ff\u00fe:verbosity=\u00e9", True),
    ("many_flags", ":".join(["verbosity=0"] * 5000), True),
]


# LLVM's runtime dies on these by design (CHECK failure on the stack depth,
# "Invalid value for bool option", file name too long): ours warns and
# carries on, which is what a program we do not control needs.
LLVM_DIES = {"int_overflow", "int_overflow_neg", "bad_bools", "long_suffix",
             "non_ascii"}


class OptionsTest(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.build = harness.Scratch("opts-build")
        cls.exe = harness.compile_program(cls.build, os.path.join(HERE, "opts.c"),
                                          runtime=RUNTIME)

    @classmethod
    def tearDownClass(cls):
        cls.build.cleanup()

    def run_with(self, opts):
        try:
            r, profs = harness.run_program(self.scratch, self.exe, check=False,
                                           env={"MEMPROF_OPTIONS": opts}, timeout=30)
        except subprocess.TimeoutExpired:
            self.fail(f"MEMPROF_OPTIONS={opts[:60]!r}: no exit in 30 s")
        err = r.stderr.decode(errors="replace")
        self.assertEqual(r.returncode, 0, f"MEMPROF_OPTIONS={opts[:60]!r}: {err[-1500:]}")
        return profs

    def test_hostile_option_strings(self):
        for label, opts, counted in CASES:
            if RUNTIME == "llvm" and label in LLVM_DIES:
                continue
            with self.subTest(case=label):
                profs = self.run_with(opts)
                self.assertEqual(len(profs), 1, profs)
                if counted:
                    sites = harness.llvm_show_raw(profs[0], self.exe)
                    got = [(s["mib"]["AllocCount"], s["mib"]["TotalSize"])
                           for s in sites if s["stack"][0][0] == "site_opt"]
                    self.assertEqual(got, [(7, 168)])
                os.unlink(profs[0])

    def test_log_path_too_long_still_profiles(self):
        # 5000 bytes do not fit the runtime's path buffer: LLVM's message
        # ("Path is too long"), then the default file rather than losing
        # the profile; never a crash or a truncated name.  The profile is
        # not where asked: exit status 1, as LLVM's (which dies at start).
        if RUNTIME == "llvm":
            self.skipTest("LLVM's runtime dies: 'ERROR: Path is too long'")
        r, profs = harness.run_program(self.scratch, self.exe, check=False,
                                       env={"MEMPROF_OPTIONS": "log_path=" + "p" * 5000},
                                       timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"Path is too long", r.stderr)
        self.assertEqual(len(profs), 1, "profile lost")


if __name__ == "__main__":
    harness.main()
