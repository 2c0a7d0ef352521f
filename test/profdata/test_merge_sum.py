"""Merging several raw profiles: for every context, the merge of N runs is
the sum of the single-run results (llvm-profdata-22 drops inputs here; we
must not), each single-run result equals llvm-profdata-22's, the totals
match what the program did, and merging the single-run indexed outputs
gives the same as merging the raw files."""
import os

import harness

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs", "contexts.cc")
# (hot iterations, cold blocks) of each run
RUNS = [(10, 1), (20, 2), (30, 1), (40, 3)]
SUMMED = ("AllocCount", "TotalSize", "TotalLifetime", "TotalLifetimeAccessDensity")


def show(*inputs, binary=None):
    args = ["show", *inputs]
    if binary:
        args.append(f"--profiled-binary={binary}")
    return harness.parse_memprof_yaml(harness.memprof_profdata(*args).stdout)


class MergeSum(harness.ProfTest):
    def runs(self, rt):
        exe = harness.compile_program(self.scratch, SRC, out=f"prog-{rt}", runtime=rt)
        raws = []
        for i, (reps, colds) in enumerate(RUNS):
            _, got = harness.run_program(self.scratch, exe, args=[str(reps), str(colds)])
            self.assertEqual(len(got), 1)
            path = self.scratch.path(f"run{i}-{rt}.profraw")
            os.rename(got[0], path)
            raws.append(path)
        return exe, raws

    def check_runtime(self, rt):
        exe, raws = self.runs(rt)
        singles = [harness.yaml_contexts(show(r, binary=exe), SUMMED) for r in raws]
        merged = harness.yaml_contexts(show(*raws, binary=exe), SUMMED)

        # each single run is what llvm-profdata-22 makes of it
        for raw, single in zip(raws, singles):
            ref = self.scratch.path("ref.memprofdata")
            harness.run(["llvm-profdata-22", "merge", raw, f"--profiled-binary={exe}",
                         "-o", ref])
            llvm = harness.parse_memprof_yaml(
                harness.run(["llvm-profdata-22", "show", "--memory", ref]).stdout)
            self.assertEqual(single, harness.yaml_contexts(llvm, SUMMED))

        # the merge is the per-context sum
        keys = set().union(*singles)
        self.assertEqual(set(merged), keys)
        for k in keys:
            want = {f: sum(s[k][f] for s in singles if k in s) for f in SUMMED}
            self.assertEqual(merged[k], want, f"context {k}")

        # ... and agrees with the program
        main, obj = harness.llvm_guid("main"), harness.llvm_guid("_Z9obj_allocm")
        hot = harness.llvm_guid("_Z8hot_pathm")
        cold = harness.llvm_guid("_Z9cold_pathm")
        by_leaf = {}
        for (g, stack), mib in merged.items():
            by_leaf.setdefault((g, stack[1][0] if len(stack) > 1 else None,
                                stack[0][1]), []).append(mib)
        n_hot = sum(r for r, _ in RUNS)
        n_cold = sum(c for _, c in RUNS)
        self.assertEqual([(m["AllocCount"], m["TotalSize"]) for m in by_leaf[(obj, hot, 0)]],
                         [(n_hot, 128 * n_hot)])
        self.assertEqual([(m["AllocCount"], m["TotalSize"]) for m in by_leaf[(obj, cold, 0)]],
                         [(n_cold, 65536 * n_cold)])
        mains = sorted((m["AllocCount"], m["TotalSize"])
                       for (g, _, _), ms in by_leaf.items() if g == main for m in ms)
        self.assertEqual(mains, sorted([(n_cold, 32768 * n_cold), (n_hot, 256 * n_hot)]))

        # merging our indexed single-run files gives the same contexts
        idx = []
        for i, raw in enumerate(raws):
            out = self.scratch.path(f"one{i}-{rt}.memprofdata")
            harness.memprof_profdata("merge", raw, f"--profiled-binary={exe}", "-o", out)
            idx.append(out)
        all_idx = self.scratch.path(f"all-{rt}.memprofdata")
        harness.memprof_profdata("merge", *idx, "-o", all_idx)
        self.assertEqual(harness.yaml_contexts(show(all_idx), SUMMED), merged)
        # and so does a mix of raw and indexed inputs, in another order
        mix = self.scratch.path(f"mix-{rt}.memprofdata")
        harness.memprof_profdata("merge", idx[3], raws[1], idx[0], raws[2],
                                 f"--profiled-binary={exe}", "-o", mix)
        self.assertEqual(harness.yaml_contexts(show(mix), SUMMED), merged)

    def test_merge_is_sum(self):
        for rt in harness.available_runtimes():
            with self.subTest(runtime=rt):
                self.check_runtime(rt)


if __name__ == "__main__":
    harness.main()
