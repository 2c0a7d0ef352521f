"""test_instrprof.py - instrumentation (PGO) profiles merged with memory
profiles into one indexed file, against llvm-profdata-22, clang-22 and
clang-19.

Asserts:
 (a) for contexts.cc built once with clang-22 -fprofile-generate and once
     with -fmemory-profile (our runtime and LLVM's), `merge ir.profraw
     memprof.profraw --profiled-binary=BIN --no-symbolized-section
     --index-version=13` writes llvm-profdata-22's bytes (13 is its default
     index version; ours is 12, which clang-19 reads);
 (b) clang-22 with -fprofile-use=F -fmemory-profile-use=F gives the same IR
     for our default file (index 12, symbolized section) as for
     llvm-profdata-22's, and that IR has branch weights and memprof hints;
 (c) clang-19 reads our default combined file: its IR equals the IR it
     gives with the two parts from llvm-profdata (instrumentation file
     --write-prev-version, memory file --memprof-version=3), branch weights
     and hints included;
 (d) several raw files of instrprog.c (clang-22 and clang-19) merge to
     llvm-profdata-22's bytes, and main's entry count is the sum of the
     runs' counts; front-end and IR records of one name (MC/DC bitmaps
     included), weights, --sparse, the warnings for counters that
     disagree (text, order, hint), saturation and value sites cut to 255
     match llvm-profdata-22 too;
 (e) show prints the instrumentation summary llvm-profdata-22 prints.
"""
import os
import re

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "inputs", "contexts.cc")
INSTRPROG = os.path.join(os.path.dirname(HERE), "fuzz", "instrprog.c")
PGO_FLAGS = ["-O2", "-gmlt", "-fdebug-info-for-profiling"]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def llvm_merge(scratch, name, *args, llvm=22):
    out = scratch.path(name)
    r = harness.run([f"llvm-profdata-{llvm}", "merge", *map(str, args), "-o", out])
    return out, r.stderr


def ours_merge(scratch, name, *args):
    out = scratch.path(name)
    r = harness.memprof_profdata("merge", *args, "-o", out)
    return out, r.stderr


def show(path):
    return harness.run(["llvm-profdata-22", "show", "--all-functions", "--counts",
                        "--ic-targets", "--memop-sizes", path]).stdout


def pgo_raw(scratch, src, name, llvm=22, args=()):
    """Build src with clang-<llvm> -fprofile-generate, run it; the raw file."""
    cc = f"clang++-{llvm}" if src.endswith(".cc") else f"clang-{llvm}"
    exe = scratch.path(name)
    if not os.path.exists(exe):
        harness.run([cc, *PGO_FLAGS, "-fprofile-generate", src, "-o", exe])
    raw = scratch.path(f"{name}-{'-'.join(map(str, args)) or 'default'}.profraw")
    harness.run([exe, *map(str, args)], env=dict(os.environ, LLVM_PROFILE_FILE=raw),
                cwd=scratch.dir)
    return raw


class CombinedVsLLVM(harness.ProfTest):
    """contexts.cc: one -fprofile-generate build, one -fmemory-profile build
    per runtime."""

    def memprof_raw(self, rt):
        exe = harness.compile_program(self.scratch, SRC, out=f"mem-{rt}", runtime=rt)
        _, raws = harness.run_program(self.scratch, exe)
        self.assertEqual(len(raws), 1, raws)
        return exe, raws[0]

    def use_ir(self, profile, name, llvm=22, instr=None):
        return harness.use_ir(self.scratch, SRC, profile, name, llvm=llvm,
                              extra=[f"-fprofile-use={instr or profile}"])

    def check_ir(self, ir):
        self.assertIn("!{!\"branch_weights\"", ir)
        self.assertIn("!{!\"function_entry_count\"", ir)
        self.assertIn("!memprof !", ir)
        self.assertIn('"memprof"="cold"', ir)

    def test_bytes_and_ir_clang22(self):
        ir_raw = pgo_raw(self.scratch, SRC, "pgo22")
        for rt in harness.available_runtimes():
            with self.subTest(runtime=rt):
                exe, mem = self.memprof_raw(rt)
                llvm, _ = llvm_merge(self.scratch, f"llvm-{rt}.profdata", ir_raw,
                                     mem, f"--profiled-binary={exe}")
                same, _ = ours_merge(self.scratch, f"ours13-{rt}.profdata", ir_raw,
                                     mem, f"--profiled-binary={exe}",
                                     "--no-symbolized-section", "--index-version=13")
                self.assertEqual(read(same), read(llvm))
                ours, _ = ours_merge(self.scratch, f"ours-{rt}.profdata", ir_raw,
                                     mem, f"--profiled-binary={exe}")
                ir_llvm = self.use_ir(llvm, f"llvm-{rt}.ll")
                self.check_ir(ir_llvm)
                self.assertEqual(self.use_ir(ours, f"ours-{rt}.ll"), ir_llvm)

    def test_clang19_reads_default_output(self):
        ir_raw = pgo_raw(self.scratch, SRC, "pgo19", llvm=19)
        exe, mem = self.memprof_raw("ours")
        ours, _ = ours_merge(self.scratch, "ours19.profdata", ir_raw, mem,
                             f"--profiled-binary={exe}")
        self.assertEqual(read(ours)[8:16], bytes([12, 0, 0, 0, 0, 0, 0, 0x41]))
        instr, _ = llvm_merge(self.scratch, "instr19.profdata", ir_raw,
                              "--write-prev-version")
        memory, _ = llvm_merge(self.scratch, "memory19.profdata", mem,
                               f"--profiled-binary={exe}", "--memprof-version=3",
                               "--write-prev-version")
        ir_llvm = self.use_ir(memory, "llvm19.ll", llvm=19, instr=instr)
        self.check_ir(ir_llvm)
        self.assertEqual(self.use_ir(ours, "ours19.ll", llvm=19), ir_llvm)


class InstrMerge(harness.ProfTest):
    """Instrumentation profiles alone: raw files of instrprog.c and indexed
    files llvm-profdata makes from text."""

    def both(self, name, *args, ours_args=()):
        """Merge with both tools (llvm-profdata on one thread: with more, it
        merges inputs in an order that varies from run to run); assert equal
        bytes; return (path, stderr of ours, stderr of llvm)."""
        llvm, lerr = llvm_merge(self.scratch, f"llvm-{name}", "--num-threads=1",
                                *args)
        ours, oerr = ours_merge(self.scratch, f"ours-{name}", *args,
                                "--num-threads=1", "--index-version=13",
                                *ours_args)
        self.assertEqual(read(ours), read(llvm), name)
        return ours, oerr, lerr

    def text_profile(self, name, text):
        path = self.scratch.write(name + ".txt", text)
        out, _ = llvm_merge(self.scratch, name + ".profdata", path)
        return out

    def entry_count(self, path, func="main"):
        m = re.search(rf"^  {func}:\n(?:    .*\n)*?    Block counts: \[(\d+)", show(path),
                      re.M)
        self.assertTrue(m, show(path))
        return int(m.group(1))

    def test_several_raw_files_sum(self):
        for llvm in (22, 19):
            with self.subTest(clang=llvm):
                raws = [pgo_raw(self.scratch, INSTRPROG, f"ip{llvm}", llvm, [n])
                        for n in (100, 250, 1000)]
                merged, _, _ = self.both(f"sum{llvm}.profdata", *raws)
                self.assertEqual(self.entry_count(merged),
                                 sum(self.entry_count(r) for r in raws))
                self.assertEqual(self.entry_count(merged), 1350)
                self.assertEqual(show(merged), show(llvm_merge(
                    self.scratch, f"check{llvm}.profdata", *raws)[0]))

    def test_front_end_and_ir_mixed(self):
        # negate() has an IR and a front-end record under one name: their
        # order is LLVM's map's, which depends on insertion order and hash
        ir = pgo_raw(self.scratch, INSTRPROG, "ipi", 22, [40])
        exe = self.scratch.path("ipfe")
        harness.run(["clang-22", "-O1", "-fprofile-instr-generate",
                     "-fcoverage-mapping", "-fcoverage-mcdc", INSTRPROG, "-o", exe])
        fe = self.scratch.path("fe.profraw")
        harness.run([exe, "40"], env=dict(os.environ, LLVM_PROFILE_FILE=fe))
        self.both("fe-ir.profdata", fe, ir)
        merged, _, _ = self.both("ir-fe.profdata", ir, fe)
        self.assertEqual(show(merged).count("  negate:"), 2)

    def test_weights_and_sparse(self):
        a = pgo_raw(self.scratch, INSTRPROG, "ipw", 22, [10])
        b = pgo_raw(self.scratch, INSTRPROG, "ipw", 22, [0])
        merged, _, _ = self.both("weighted.profdata", "--weighted-input=7,"
                                 + a, b)
        self.assertEqual(self.entry_count(merged), 7 * 10)
        sparse, _, _ = self.both("sparse.profdata", "--sparse", b)
        full, _, _ = self.both("full.profdata", b)
        self.assertLess(len(read(sparse)), len(read(full)))
        r = harness.memprof_profdata("merge", "--weighted-input=0," + a, "-o",
                                     self.scratch.path("w0"), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("input weight must be a positive integer", r.stderr)

    def test_disagreeing_records(self):
        a = self.text_profile("a", ":ir\nfoo\n100\n2\n10\n20\n\nbar\n200\n1\n"
                              "18446744073709551610\n\nbaz\n300\n1\n5\n\n")
        b = self.text_profile("b", ":ir\nfoo\n100\n3\n1\n2\n3\n\nbar\n200\n1\n"
                              "100\n\nbaz\n301\n1\n9\n\n")
        merged, oerr, lerr = self.both("disagree.profdata", a, b, b)
        self.assertEqual(oerr, lerr)
        self.assertEqual(oerr.count("Make sure that all profile data"), 1)
        self.assertIn(f"{b}: foo: function basic block count change detected "
                      "(counter mismatch)\n", oerr)
        self.assertIn(f"{b}: bar: counter overflow\n", oerr)
        text = show(merged)
        self.assertIn("Block counts: [18446744073709551613]", text)
        self.assertEqual(text.count("  baz:"), 2)  # one record per hash

    def test_value_sites_cut_to_255(self):
        def prof(name, values):
            body = "".join(f"{v}:{c}\n" for v, c in values)
            return self.text_profile(name, ":ir\nfoo\n100\n1\n5\n1\n1\n1\n"
                                     f"{len(values)}\n{body}\n")
        a = prof("va", [(v, v % 17 + 1) for v in range(0, 400, 2)])
        b = prof("vb", [(v, v % 13 + 1) for v in range(1, 600, 3)])
        merged, _, _ = self.both("values.profdata", a, b, "--weighted-input=2," + a)
        self.assertIn("[  0,", show(merged))
        sizes = re.findall(r"^\t\[  0,", show(merged), re.M)
        self.assertEqual(len(sizes), 255)

    def test_show_summary(self):
        raw = pgo_raw(self.scratch, INSTRPROG, "ips", 22, [30])
        llvm = harness.run(["llvm-profdata-22", "show", raw]).stdout
        ours = harness.memprof_profdata("show", raw).stdout
        for key in ("Total functions", "Maximum function count",
                    "Maximum internal block count", "Total number of blocks",
                    "Total count"):
            line = re.search(rf"^{key}: \d+$", llvm, re.M).group(0)
            self.assertIn(f"# {line}\n", ours)
        self.assertTrue(ours.startswith("---\n# Instrumentation level: IR "))


if __name__ == "__main__":
    harness.main()
