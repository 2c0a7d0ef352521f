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

LIB = r"""
#include <stdlib.h>
char *NAME(int n) {
  char *p = malloc(n); // @alloc
  for (int i = 0; i < n; i++)
    p[i] = 1;
  return p;
}
"""

MAIN = r"""
#include <stdlib.h>
char *alloc_a(int);
char *alloc_b(int);
int main(void) {
  for (int i = 0; i < 3; i++)
    free(alloc_a(40));
  char *live = alloc_b(100);
  char *m = malloc(24); // @main_malloc
  m[0] = 1;
  free(m);
  return live[99] == 1 ? 0 : 1;
}
"""

DLOPEN_MAIN = r"""
#include <dlfcn.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h)
    return 2;
  char *(*alloc)(int) = (char *(*)(int))dlsym(h, "alloc_c");
  for (int i = 0; i < 2; i++)
    free(alloc(72));
  char *live = alloc(200);
  return live[0] == 1 ? 0 : 1; /* the library stays loaded: its segment
                                   is in the exit dump */
}
"""

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
            src = self.scratch.write(f"{name}.c", LIB.replace("NAME", name))
            so = self.scratch.path(f"lib{name}.so")
            harness.run([f"clang-{llvm}", "-shared", "-fPIC", "-O0", *harness.PROFILE_FLAGS,
                         src, "-o", so])
            libs[name] = so
        return libs

    def check_dsos(self, raw, libs, expected):
        (prof,) = harness.read_raw(raw)
        ids = [seg[3].hex() for seg in prof["segments"]]
        marks = harness.marked_sites(LIB.replace("NAME", "x"))
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
            self.scratch, self.scratch.write("main.c", MAIN), runtime="shadow",
            ldflags=[f"-L{self.scratch.dir}", "-lalloc_a", "-lalloc_b",
                     f"-Wl,-rpath,{self.scratch.dir}", *ldflags])
        _, raws = harness.run_program(self.scratch, exe, env=env)
        self.assertEqual(len(raws), 1)
        self.check_dsos(raws[0], libs, EXPECTED)
        sites = harness.llvm_show_raw(raws[0], exe)
        rt_common.assert_sites(self, sites, harness.marked_sites(MAIN),
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
        exe = harness.compile_program(self.scratch, self.scratch.write("dl.c", DLOPEN_MAIN),
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
