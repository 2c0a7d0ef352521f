"""Programs built with -gsplit-dwarf: the binary holds skeleton units (address
ranges, line tables) and each translation unit's functions and inline
chains sit in its .dwo file.

1. With the .dwo files where the binary records them, a raw profile gives
   the same contexts and MIBs as `llvm-profdata-22 show --memory RAW`, and
   the same indexed profile as llvm-profdata-22's (both runtimes; -O2 with
   inline frames; DWARF 5 and DWARF 4 GNU split units).
2. The binary and its .dwo files (relative names) moved to another folder:
   found beside it.
   One .dwo missing: the merge still succeeds, the contexts lose exactly
   the frames of that unit's code, and a warning names the file.
3. Every .dwo missing: the merge fails, names the missing file, and leaves
   no output; when they were packed into BINARY.dwp, which libdw 0.188
   cannot read, the message says that too."""
import os

import harness
from test_raw_vs_llvm import HOTCOLD, llvm_raw_contexts

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs")
REPS = 7


class SplitDwarf(harness.ProfTest):
    def same_as_llvm(self, exe, raw):
        ours = harness.parse_memprof_yaml(harness.memprof_profdata(
            "show", raw, f"--profiled-binary={exe}").stdout)
        ctx = harness.yaml_contexts(ours)
        for mib in ctx.values():
            mib.pop("AccessHistogram", None)  # a pointer in LLVM's dump
        self.assertEqual(ctx, llvm_raw_contexts(raw, exe))
        ref = self.scratch.path("ref.memprofdata")
        harness.run(["llvm-profdata-22", "merge", raw, f"--profiled-binary={exe}", "-o", ref])
        theirs = harness.parse_memprof_yaml(
            harness.run(["llvm-profdata-22", "show", "--memory", ref]).stdout)
        self.assertEqual(harness.yaml_callsites(ours), harness.yaml_callsites(theirs))
        self.assertEqual(harness.yaml_contexts(ours, HOTCOLD),
                         harness.yaml_contexts(theirs, HOTCOLD))
        return ours

    def test_same_profile_as_llvm(self):
        for rt in harness.available_runtimes():
            for dwarf in ("-gdwarf-5", "-gdwarf-4"):
                with self.subTest(runtime=rt, dwarf=dwarf):
                    out = f"inl-{rt}{dwarf}"
                    exe = harness.compile_program(
                        self.scratch, os.path.join(HERE, "inline.cc"), out=out,
                        runtime=rt, opt="-O2", cflags=[dwarf, "-gsplit-dwarf"])
                    self.assertTrue(os.path.exists(self.scratch.path(out + ".dwo")))
                    _, raws = harness.run_program(self.scratch, exe, args=["20"])
                    ours = self.same_as_llvm(exe, raws[0])
                    inl = harness.llvm_guid("_ZL9inl_allocm")
                    counts = sorted(m["AllocCount"] for _, m in ours[inl]["allocs"])
                    self.assertEqual(counts, [20, 40])
                    self.assertTrue(ours[inl]["allocs"][0][0][0][3], "leaf frame is inline")
                    os.unlink(raws[0])

    def build_two_units(self):
        """libmain.cc + lib.cc (one executable, two .dwo files)."""
        s = self.scratch
        lib_o = s.path("lib.o")
        harness.run(["clang++-22", "-c", "-O0", *harness.PROFILE_FLAGS, "-gsplit-dwarf",
                     os.path.join(HERE, "lib.cc"), "-o", lib_o])
        exe = harness.compile_program(s, os.path.join(HERE, "libmain.cc"), out="two",
                                      cflags=["-gsplit-dwarf"], ldflags=[lib_o])
        _, raws = harness.run_program(s, exe, args=[str(REPS)])
        self.assertEqual(len(raws), 1)
        return exe, raws[0]

    def test_one_dwo_missing(self):
        exe, raw = self.build_two_units()
        g = harness.llvm_guid
        lib_alloc, lib_entry = g("_Z9lib_allocm"), g("_Z9lib_entrym")
        caller, main = g("_Z10exe_calleri"), g("main")
        full = self.same_as_llvm(exe, raw)
        stacks = {tuple(f[0] for f in k[1]) for k in harness.yaml_contexts(full)}
        self.assertIn((lib_alloc, lib_entry, caller, main), stacks)

        lib_dwo = self.scratch.path("lib.dwo")
        os.rename(lib_dwo, lib_dwo + ".away")
        out = self.scratch.path("one.memprofdata")
        r = harness.memprof_profdata("merge", raw, f"--profiled-binary={exe}", "-o", out)
        self.assertIn(f"warning: {exe}: 1 split DWARF file was found neither where the "
                      f"binary records it nor beside it (the first: {lib_dwo}): "
                      "allocations in its code have no frames", r.stderr)
        got = harness.parse_memprof_yaml(
            harness.run(["llvm-profdata-22", "show", "--memory", out]).stdout)
        ctx = harness.yaml_contexts(got)
        # lib.cc's frames are gone; the contexts start in the executable
        self.assertEqual({tuple(f[0] for f in k[1]) for k in ctx},
                         {(caller, main), (main,)})
        by_top = {k[1][0][0]: m for k, m in ctx.items()}
        self.assertEqual((by_top[caller]["AllocCount"], by_top[caller]["TotalSize"]),
                         (REPS, 100 * REPS))
        self.assertEqual(by_top[main]["TotalSize"], 300)

    def test_moved_build_tree(self):
        """Objects compiled with relative output paths record relative .dwo
        names (as build systems do); the binary and its .dwo files moved
        together to another folder, where DW_AT_comp_dir no longer leads,
        are still found: libdw also looks beside the binary."""
        s = self.scratch
        run = lambda *cmd: harness.run(list(cmd), cwd=s.dir)
        flags = ["-O0", *harness.PROFILE_FLAGS, "-gsplit-dwarf"]
        run("clang++-22", "-c", *flags, os.path.join(HERE, "lib.cc"), "-o", "lib.o")
        run("clang++-22", "-c", *flags, os.path.join(HERE, "libmain.cc"), "-o", "rel.o")
        run("clang++-22", "rel.o", "lib.o", "-o", "rel", "-Wl,--whole-archive",
            harness.find_built("libmemprof.a"), "-Wl,--no-whole-archive",
            "-lpthread", "-ldl", "-lm")
        _, raws = harness.run_program(s, s.path("rel"), args=[str(REPS)])
        full = harness.memprof_profdata("show", raws[0], f"--profiled-binary={s.path('rel')}").stdout
        self.assertIn(harness.llvm_guid("_Z9lib_allocm").to_bytes(8, "big").hex(), full)
        moved = s.path("moved")
        os.makedirs(moved)
        for name in ("rel", "lib.dwo", "rel.dwo"):
            os.rename(s.path(name), os.path.join(moved, name))
        r = harness.memprof_profdata("show", raws[0],
                                     f"--profiled-binary={os.path.join(moved, 'rel')}")
        self.assertEqual(r.stdout, full)
        self.assertEqual(r.stderr, "")

    def test_all_dwo_missing(self):
        exe, raw = self.build_two_units()
        for name in ("lib.dwo", "two.dwo"):
            os.rename(self.scratch.path(name), self.scratch.path(name + ".away"))
        out = self.scratch.path("none.memprofdata")
        r = harness.memprof_profdata("merge", raw, f"--profiled-binary={exe}", "-o", out,
                                     check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"has a symbolizable frame: {exe}: 2 split DWARF files were found "
                      "neither where the binary records them nor beside it "
                      "(the first: ", r.stderr)
        self.assertNotIn(".dwp", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_dwp_package(self):
        """The .dwo files packed into BINARY.dwp (llvm-dwp) and removed:
        elfutils 0.188 cannot read the package, and the message says so
        (a libdw that can read it gives the full profile instead)."""
        exe, raw = self.build_two_units()
        full = harness.memprof_profdata("show", raw, f"--profiled-binary={exe}").stdout
        harness.run(["llvm-dwp-22", "-e", exe, "-o", exe + ".dwp"])
        for name in ("lib.dwo", "two.dwo"):
            os.rename(self.scratch.path(name), self.scratch.path(name + ".away"))
        r = harness.memprof_profdata("show", raw, f"--profiled-binary={exe}", check=False)
        if r.returncode == 0:
            self.assertEqual(r.stdout, full)
        else:
            self.assertEqual(r.returncode, 1)
            self.assertIn("; the .dwp package beside the binary is not read", r.stderr)


if __name__ == "__main__":
    harness.main()
