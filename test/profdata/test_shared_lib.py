"""A program that allocates inside an instrumented shared library gets
symbolized frames from both modules when both are given with
--profiled-binary; with only the executable, the library's frames are
dropped and the contexts start in the executable."""
import os

import harness

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs")
REPS = 7


class SharedLib(harness.ProfTest):
    def build(self, rt):
        s = self.scratch
        so = s.path(f"liblib-{rt}.so")
        harness.run(["clang++-22", "-O0", "-fPIC", "-shared", *harness.PROFILE_FLAGS,
                     os.path.join(HERE, "lib.cc"), "-o", so])
        flags = [so, f"-Wl,-rpath,{s.dir}"]
        if rt == "ours":
            flags.append("-rdynamic")  # the .so's instrumentation calls into the exe
        exe = harness.compile_program(s, os.path.join(HERE, "libmain.cc"),
                                      out=f"main-{rt}", runtime=rt, ldflags=flags)
        _, raws = harness.run_program(s, exe, args=[str(REPS)])
        self.assertEqual(len(raws), 1)
        return exe, so, raws[0]

    def check(self, rt):
        exe, so, raw = self.build(rt)
        g = harness.llvm_guid
        lib_alloc, lib_entry = g("_Z9lib_allocm"), g("_Z9lib_entrym")
        caller, main = g("_Z10exe_calleri"), g("main")

        both = harness.parse_memprof_yaml(harness.memprof_profdata(
            "show", raw, f"--profiled-binary={exe}", f"--profiled-binary={so}").stdout)
        ctx = harness.yaml_contexts(both)
        lib_sites = [(k, m) for k, m in ctx.items() if k[0] == lib_alloc]
        self.assertEqual(len(lib_sites), 1, ctx.keys())
        (_, stack), mib = lib_sites[0]
        self.assertEqual([f[0] for f in stack], [lib_alloc, lib_entry, caller, main])
        self.assertEqual((mib["AllocCount"], mib["TotalSize"]), (REPS, 100 * REPS))
        self.assertTrue(any(k[0] == main and len(k[1]) == 1 and m["TotalSize"] == 300
                            for k, m in ctx.items()))
        # the library functions got call sites too
        calls = harness.yaml_callsites(both)
        self.assertIn(lib_entry, calls)
        self.assertIn(caller, calls)

        # the symbolized view names both modules' functions and files
        sym = harness.memprof_profdata("show", "--symbolized", raw,
                                       f"--profiled-binary={exe}", f"--profiled-binary={so}")
        self.assertIn("lib.cc:", sym.stdout)
        self.assertIn("libmain.cc:", sym.stdout)

        exe_only = harness.yaml_contexts(harness.parse_memprof_yaml(harness.memprof_profdata(
            "show", raw, f"--profiled-binary={exe}").stdout))
        for g_rec, stack in exe_only:
            self.assertNotIn(lib_alloc, [f[0] for f in stack])
            self.assertNotIn(lib_entry, [f[0] for f in stack])
        self.assertIn(caller, [k[0] for k in exe_only])

    def test_frames_from_both_modules(self):
        for rt in harness.available_runtimes():
            with self.subTest(runtime=rt):
                self.check(rt)


if __name__ == "__main__":
    harness.main()
