"""IR identity: clang's -fmemory-profile-use gives byte-identical IR with
our indexed profile and with llvm-profdata's, for clang-22 (default output vs
llvm-profdata-22's default) and clang-19 (our default output vs
llvm-profdata-22 --memprof-version=3 --write-prev-version), and the IR really
carries memprof hints (cold, notcold and ambiguous for clang-22).  A second
program with 4096 deep contexts (a third cold) checks a large !memprof trie."""
import os
import re

import harness

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs", "contexts.cc")
MANY = os.path.join(os.path.dirname(SRC), "many_contexts.cc")


class IRIdentity(harness.ProfTest):
    def profile(self, runtime, src=SRC):
        exe = harness.compile_program(self.scratch, src, out=f"prog-{runtime}",
                                      runtime=runtime)
        _, raws = harness.run_program(self.scratch, exe)
        self.assertEqual(len(raws), 1, raws)
        return exe, raws[0]

    def ours(self, exe, raw, name, *flags):
        out = self.scratch.path(name)
        harness.memprof_profdata("merge", raw, f"--profiled-binary={exe}",
                                 *flags, "-o", out)
        return out

    def llvm(self, exe, raw, name, *flags):
        out = self.scratch.path(name)
        harness.run(["llvm-profdata-22", "merge", raw, f"--profiled-binary={exe}",
                     *flags, "-o", out])
        return out

    def hints(self, ir):
        return sorted(set(re.findall(r'"memprof"="(\w+)"', ir)))

    def test_clang22_same_ir(self):
        for rt in harness.available_runtimes():
            with self.subTest(runtime=rt):
                exe, raw = self.profile(rt)
                ours = self.ours(exe, raw, f"ours-{rt}.memprofdata")
                llvm = self.llvm(exe, raw, f"llvm-{rt}.memprofdata")
                ir_ours = harness.use_ir(self.scratch, SRC, ours, f"ours-{rt}.ll")
                ir_llvm = harness.use_ir(self.scratch, SRC, llvm, f"llvm-{rt}.ll")
                self.assertEqual(self.hints(ir_llvm), ["ambiguous", "cold", "notcold"],
                                 "the test program no longer produces all hints")
                self.assertIn("!memprof !", ir_ours)
                self.assertIn("!callsite !", ir_ours)
                self.assertEqual(ir_ours, ir_llvm)

    def test_many_contexts_same_ir(self):
        # 4096 deep contexts, a third of them cold: one big !memprof trie
        for rt in harness.available_runtimes():
            with self.subTest(runtime=rt):
                exe, raw = self.profile(rt, MANY)
                ours = self.ours(exe, raw, f"many-ours-{rt}.memprofdata")
                llvm = self.llvm(exe, raw, f"many-llvm-{rt}.memprofdata")
                ir_ours = harness.use_ir(self.scratch, MANY, ours, f"many-ours-{rt}.ll")
                ir_llvm = harness.use_ir(self.scratch, MANY, llvm, f"many-llvm-{rt}.ll")
                self.assertEqual(self.hints(ir_llvm), ["ambiguous"])
                self.assertGreaterEqual(ir_ours.count("!callsite !"), 8)
                self.assertEqual(ir_ours, ir_llvm)

    def test_clang19_same_ir(self):
        for rt in harness.available_runtimes():
            with self.subTest(runtime=rt):
                exe, raw = self.profile(rt)
                ours = self.ours(exe, raw, f"ours19-{rt}.memprofdata")
                llvm = self.llvm(exe, raw, f"llvm19-{rt}.memprofdata",
                                 "--memprof-version=3", "--write-prev-version")
                ir_ours = harness.use_ir(self.scratch, SRC, ours, f"ours19-{rt}.ll", llvm=19)
                ir_llvm = harness.use_ir(self.scratch, SRC, llvm, f"llvm19-{rt}.ll", llvm=19)
                self.assertIn("cold", self.hints(ir_llvm))
                self.assertIn("!memprof !", ir_llvm)
                self.assertEqual(ir_ours, ir_llvm)


if __name__ == "__main__":
    harness.main()
