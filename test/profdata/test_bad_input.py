"""memprof-profdata refuses bad input with a message naming the file and what
is wrong, exit status 1, and writes nothing: truncated raw files, wrong
magic, unsupported version, a stack id repeated with different PCs, no
matching binary (the message lists the profile's build ids), a missing
input; a failed merge leaves an existing output untouched.  Bad command
lines print a usage hint."""
import os
import struct

import harness

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs", "contexts.cc")


class BadInput(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("bad-input-shared")
        cls.exe = harness.compile_program(cls.shared, SRC, runtime="llvm")
        _, raws = harness.run_program(cls.shared, cls.exe, args=["5", "1"])
        with open(raws[0], "rb") as f:
            cls.raw = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    def write(self, name, data):
        path = self.scratch.path(name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def fails(self, *args, out=None):
        """Run a merge that must fail; returns stderr.  Checks exit status 1
        and that `out` (default: a fresh path) was not created."""
        out = out or self.scratch.path("never.memprofdata")
        r = harness.memprof_profdata("merge", *args, f"--profiled-binary={self.exe}",
                                     "-o", out, check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertTrue(r.stderr.startswith("memprof-profdata: error: "), r.stderr)
        self.assertEqual(r.stdout, "")
        return r.stderr

    def assertNoOutput(self, path):
        self.assertFalse(os.path.exists(path))
        self.assertEqual([n for n in os.listdir(os.path.dirname(path)) if ".tmp." in n], [])

    def test_good_input_works(self):
        good = self.write("good.profraw", self.raw)
        out = self.scratch.path("ok.memprofdata")
        harness.memprof_profdata("merge", good, f"--profiled-binary={self.exe}", "-o", out)
        self.assertGreater(os.path.getsize(out), 0)

    def test_truncated(self):
        for cut in (8, 40, len(self.raw) // 2, len(self.raw) - 8):
            with self.subTest(cut=cut):
                bad = self.write("trunc.profraw", self.raw[:cut])
                err = self.fails(bad)
                self.assertIn(f"{bad}: ", err)
                self.assertIn("offset 0x0", err)
                self.assertTrue("truncated" in err or "TotalSize" in err, err)

    def test_second_dump_truncated(self):
        bad = self.write("two.profraw", self.raw + self.raw[:100])
        err = self.fails(bad)
        self.assertIn(f"offset {hex(len(self.raw))}", err)

    def test_wrong_magic(self):
        bad = self.write("magic.profraw", b"\x00" + self.raw[1:])
        self.assertIn("not a profile (neither", self.fails(bad))
        # a later dump with a bad magic is named with its offset
        bad2 = self.write("magic2.profraw", self.raw + b"\x00" + self.raw[1:])
        err = self.fails(bad2)
        self.assertIn("bad magic", err)
        self.assertIn(f"offset {hex(len(self.raw))}", err)

    def test_wrong_version(self):
        for v in (2, 6):
            with self.subTest(version=v):
                bad = self.write("ver.profraw", self.raw[:8] + struct.pack("<Q", v) + self.raw[16:])
                err = self.fails(bad)
                self.assertIn(f"unsupported raw profile version {v}", err)

    def test_offsets_out_of_order(self):
        seg, mib = struct.unpack_from("<QQ", self.raw, 24)
        bad = bytearray(self.raw)
        struct.pack_into("<QQ", bad, 24, mib, seg)
        self.assertIn("section offsets", self.fails(self.write("ord.profraw", bytes(bad))))

    def test_huge_counts(self):
        seg, mib, stk = struct.unpack_from("<QQQ", self.raw, 24)
        for off, what in ((seg, "segment table"), (mib, "MIB table"), (stk, "stack table")):
            with self.subTest(section=what):
                bad = bytearray(self.raw)
                struct.pack_into("<Q", bad, off, 1 << 60)
                err = self.fails(self.write("cnt.profraw", bytes(bad)))
                self.assertIn(f"{what} at offset {hex(off)}", err)

    def test_stack_pc_count_too_big(self):
        stk = struct.unpack_from("<Q", self.raw, 40)[0]
        bad = bytearray(self.raw)
        struct.pack_into("<Q", bad, stk + 16, 1 << 40)  # first stack's PC count
        err = self.fails(self.write("pcs.profraw", bytes(bad)))
        self.assertIn(f"at offset {hex(stk + 8)}", err)
        self.assertIn("PCs do not fit", err)

    def test_same_stack_id_different_pcs(self):
        stk = struct.unpack_from("<Q", self.raw, 40)[0]
        sid = struct.unpack_from("<Q", self.raw, stk + 8)[0]
        second = bytearray(self.raw)
        pc = struct.unpack_from("<Q", second, stk + 24)[0]
        struct.pack_into("<Q", second, stk + 24, pc + 4)
        err = self.fails(self.write("dup.profraw", self.raw + bytes(second)))
        self.assertIn("got different call stack for same id", err)
        self.assertIn(f"{sid:016x}", err)
        # an identical repeat (two dumps of one process) is fine
        out = self.scratch.path("twice.memprofdata")
        harness.memprof_profdata("merge", self.write("twice.profraw", self.raw * 2),
                                 f"--profiled-binary={self.exe}", "-o", out)

    def test_no_matching_binary(self):
        good = self.write("good.profraw", self.raw)
        other = harness.compile_program(
            self.scratch, os.path.join(os.path.dirname(SRC), "libmain.cc"), out="other",
            runtime="llvm", ldflags=["-Wl,--unresolved-symbols=ignore-all"])
        r = harness.memprof_profdata("merge", good, f"--profiled-binary={other}",
                                     "-o", self.scratch.path("x"), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"{good}: no profiled binary matches", r.stderr)
        self.assertIn(harness.gnu_build_id(self.exe), r.stderr)
        self.assertIn(other, r.stderr)
        self.assertIn(harness.gnu_build_id(other), r.stderr)
        self.assertNoOutput(self.scratch.path("x"))

    def test_nonexistent_input(self):
        missing = self.scratch.path("nope.profraw")
        err = self.fails(missing)
        self.assertIn(f"{missing}: cannot open", err)

    def test_not_a_profile(self):
        bad = self.write("text.txt", b"hello\n")
        self.assertIn("not a profile (neither", self.fails(bad))

    def test_failed_merge_keeps_output(self):
        out = self.write("precious.memprofdata", b"precious")
        good = self.write("good.profraw", self.raw)
        bad = self.write("bad.profraw", self.raw[:-8])
        self.fails(good, bad, out=out)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), b"precious")
        self.assertEqual(sorted(os.listdir(self.scratch.dir)),
                         ["bad.profraw", "good.profraw", "precious.memprofdata"])

    def test_output_to_fifo(self):
        # a special file is written in place, never replaced by a rename
        import threading
        good = self.write("good.profraw", self.raw)
        fifo = self.scratch.path("fifo")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
        reader.start()
        harness.memprof_profdata("merge", good, f"--profiled-binary={self.exe}", "-o", fifo)
        reader.join(30)
        import stat
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        self.assertEqual(got[0][:8], b"\xfflprofi\x81")

    def test_command_line_errors(self):
        cases = [
            (["merge", "--bogus", "x"], "unknown option '--bogus'"),
            (["merge"], "no input files"),
            (["merge", "--memprof-version=7", "x"], "invalid value '7' for --memprof-version"),
            (["merge", "--index-version", "9", "x"], "invalid value '9' for --index-version"),
            (["merge", "x", "-o"], "option '-o' needs a value"),
            (["show", "--memprof-full-schema", "x"], "not valid for show"),
            (["frobnicate", "x"], "unknown command 'frobnicate'"),
            ([], "no command given"),
        ]
        for args, msg in cases:
            with self.subTest(args=args):
                r = harness.memprof_profdata(*args, check=False)
                self.assertEqual(r.returncode, 1)
                self.assertIn(msg, r.stderr)
                self.assertIn("--help", r.stderr)

    def test_help_and_version(self):
        for args, want in ((["--help"], "Commands:"), (["merge", "--help"], "--profiled-binary"),
                           (["show", "-h"], "--symbolized"), (["--version"], "memprof-profdata ")):
            with self.subTest(args=args):
                r = harness.memprof_profdata(*args)
                self.assertIn(want, r.stdout)

    def test_both_flag_forms(self):
        good = self.write("good.profraw", self.raw)
        a, b = self.scratch.path("a"), self.scratch.path("b")
        harness.memprof_profdata("merge", good, f"--profiled-binary={self.exe}",
                                 "--memprof-version=2", f"--output={a}")
        harness.memprof_profdata("merge", "--profiled-binary", self.exe, "--memprof-version", "2",
                                 "-o", b, good)
        with open(a, "rb") as fa, open(b, "rb") as fb:
            self.assertEqual(fa.read(), fb.read())


if __name__ == "__main__":
    harness.main()
