"""test_rt_dso.py - instrumented shared libraries and the shared runtime.

LLVM's multiple-profiled-dsos idea: two instrumented DSOs allocate, the
program's profile carries one segment per DSO with its build id, and
llvm-profdata symbolizes each DSO's allocation site against that DSO
(--profiled-binary=<dso>) with exact counts.  Three ways in:
 - the program linked against libmemprof.so (what -shared-libsan does);
 - the program linked with no runtime at all and libmemprof.so injected
   with LD_PRELOAD (an instrumented executable cannot link without the
   runtime, since it references __memprof_shadow_memory_dynamic_address:
   the link leaves those references unresolved for the loader);
 - an instrumented DSO dlopen'ed by a program with the static runtime,
   also checked against LLVM 22's runtime.  The program must export the
   runtime's __memprof_* symbols for the DSO to bind to (LLVM's driver
   passes a --dynamic-list; nothing references them at link time here).
"""
import os

import harness
import rt_common


# progs/: the library (its function named by -DNAME=), the program linked
# with two of them, the program that dlopens one.
LIB, MAIN, DLOPEN_MAIN = "dso_alloc.c", "dso_main.c", "dso_dlopen.c"

# What a program with the static runtime needs for dlopen'ed instrumented
# code (without it dlopen fails: undefined __memprof_shadow_...).
EXPORT_ABI = "-Wl,--dynamic-list=" + os.path.join(harness.ROOT, "runtime", "memprof.syms")

# DSO -> [(AllocCount, TotalSize, TotalAccessCount)] of its @alloc site,
# one entry per calling context: one char store per byte, plus main's one
# load from the live block.
EXPECTED = {"alloc_a": [(3, 3 * 40, 3 * 40)], "alloc_b": [(1, 100, 100 + 1)]}


class ProfiledDsos(harness.ProfTest):
    def build_libs(self, names, llvm=22):
        libs = {}
        for name in names:
            so = self.scratch.path(f"lib{name}.so")
            harness.run([f"clang-{llvm}", "-shared", "-fPIC", "-O0", *harness.PROFILE_FLAGS,
                         f"-DNAME={name}", harness.prog_path(__file__, LIB), "-o", so])
            libs[name] = so
        return libs

    def check_dsos(self, raw, libs, expected):
        (prof,) = harness.read_raw(raw)
        ids = [seg[3].hex() for seg in prof["segments"]]
        marks = harness.marked_sites(harness.prog_text(__file__, LIB))
        for name, want in expected.items():
            with self.subTest(dso=name):
                self.assertEqual(ids.count(harness.gnu_build_id(libs[name])), 1)
                sites = harness.llvm_show_raw(raw, libs[name])
                for s in sites:
                    self.assertEqual(s["stack"][0][:2], (name, marks["alloc"][1]))
                got = sorted((s["mib"]["AllocCount"], s["mib"]["TotalSize"],
                              s["mib"]["TotalAccessCount"]) for s in sites)
                self.assertEqual(got, sorted(want))

    def run_main(self, libs, ldflags, env=None):
        exe = harness.compile_program(
            self.scratch, harness.prog_path(__file__, MAIN), runtime="shadow",
            ldflags=[f"-L{self.scratch.dir}", "-lalloc_a", "-lalloc_b",
                     f"-Wl,-rpath,{self.scratch.dir}", *ldflags])
        _, raws = harness.run_program(self.scratch, exe, env=env)
        self.assertEqual(len(raws), 1)
        self.check_dsos(raws[0], libs, EXPECTED)
        sites = harness.llvm_show_raw(raws[0], exe)
        rt_common.assert_sites(self, sites,
                               harness.marked_sites(harness.prog_text(__file__, MAIN)),
                               {"main_malloc": (1, 24, 1)})
        return exe

    def test_linked_shared_runtime(self):
        libs = self.build_libs(["alloc_a", "alloc_b"])
        so = harness.find_built("libmemprof.so")
        libdir = os.path.dirname(so)
        self.run_main(libs, [f"-L{libdir}", "-lmemprof", f"-Wl,-rpath,{libdir}"])

    def test_ld_preload_into_program_without_runtime(self):
        libs = self.build_libs(["alloc_a", "alloc_b"])
        exe = self.run_main(libs, ["-Wl,--unresolved-symbols=ignore-in-object-files"],
                            env={"LD_PRELOAD": harness.find_built("libmemprof.so")})
        undefined = harness.run(["nm", "-D", "--undefined-only", exe]).stdout
        self.assertIn("__memprof_shadow_memory_dynamic_address", undefined)
        self.assertIn("__memprof_init", undefined)

    def dlopen_run(self, runtime):
        libs = self.build_libs(["alloc_c"])
        exe = harness.compile_program(self.scratch,
                                      harness.prog_path(__file__, DLOPEN_MAIN),
                                      out="dl", runtime=runtime,
                                      ldflags=[EXPORT_ABI, "-ldl"])
        _, raws = harness.run_program(self.scratch, exe, [libs["alloc_c"]])
        self.assertEqual(len(raws), 1)
        self.check_dsos(raws[0], libs, {"alloc_c": [(2, 2 * 72, 2 * 72), (1, 200, 200 + 1)]})

    def test_dlopen_instrumented_library(self):
        self.dlopen_run("ours")

    def test_dlopen_llvm22_reference(self):
        self.dlopen_run("llvm")


if __name__ == "__main__":
    harness.main()
