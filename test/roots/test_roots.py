"""test_roots.py - the roots census (MEMPROF_OPTIONS=roots=1) of
progs/roots_prog.c, exact per root and per context, linked with
libmemprof.a and preloaded into a build without -fmemory-profile, with one
thread and two, at exit and on demand; and its leaks against
LeakSanitizer's (clang-22 -fsanitize=leak) on the same source.

Contexts are told apart by their blocks' sizes (each allocation site of
the program has its own), read from the raw profile's MIBs."""
import glob
import os
import re
import shutil
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import harness  # noqa: E402
import roots_file as rf  # noqa: E402

SRC = harness.prog_path(__file__, "roots_prog.c")
CFLAGS = ["-g", "-O0", "-fno-omit-frame-pointer"]

# {root label: (reached bytes, blocks), (retained bytes, blocks),
#  {block size: retained bytes}} at exit, "gone" removed.
AT_EXIT = {
    "my_named_root (named)": ((200, 1), (200, 1), {200: 200}),
    "named_buf (PROG)": ((0, 0), (0, 0), {}),
    "removed_buf (PROG)": ((250, 1), (250, 1), {250: 250}),
    "interior (PROG)": ((400, 1), (400, 1), {400: 400}),
    "list_a (PROG)": ((192, 3), (64, 1), {64: 64}),
    "list_b (PROG)": ((128, 2), (0, 0), {}),
    "cache (PROG)": ((3000, 5), (3000, 5), {1000: 1000, 500: 2000}),
}
# On demand, "gone" still registered: it beats the global that holds it.
ON_DEMAND = dict(AT_EXIT)
ON_DEMAND["gone (named)"] = ((250, 1), (250, 1), {250: 250})
ON_DEMAND["removed_buf (PROG)"] = ((0, 0), (0, 0), {})
SHARED = {64: 128}
# unreached: {size: (bytes, blocks, direct bytes, direct blocks)}
UNREACHED = {96: (192, 2, 0, 0), 300: (300, 1, 300, 1)}
LSAN_LEAKED = (492, 3)  # 300 direct + 2 x 96 indirect (the cycle)
THREAD_BLOCK = 333


def sizes_of(raw):
    """{stack id: block size} from the raw profile's MIBs."""
    prof = harness.read_raw(raw)[-1]
    return {sid: m["MaxSize"] for sid, m in prof["mibs"].items()}


class RootsCensus(harness.ProfTest):
    def build(self, kind):
        if kind == "linked":
            return harness.compile_program(self.scratch, SRC, out="linked", cflags=CFLAGS[2:],
                                           ldflags=["-lpthread"])
        exe = self.scratch.path("plain")
        harness.run(["clang-22", *CFLAGS, SRC, "-o", exe, "-lpthread"])
        return exe

    def census(self, kind, args):
        exe = self.build(kind)
        env = {"MEMPROF_OPTIONS": "roots=1"}
        if kind == "preloaded":
            env["LD_PRELOAD"] = harness.find_built("libmemprof.so")
        _, raws = harness.run_program(self.scratch, exe, args, env=env)
        raws = [r for r in raws if re.search(r"\.profraw\.\d+$", r)]
        self.assertEqual(len(raws), 1, raws)
        with open(raws[0] + ".roots", "rb") as f:
            roots = rf.decode(f.read())
        self.assertEqual(roots["raw_bytes"], os.path.getsize(raws[0]))
        return os.path.basename(exe), sizes_of(raws[0]), roots["census"]

    def check(self, prog, sizes, c, want, threads):
        labels = {rf.root_name(c, x): x for x in c["roots"]}
        for name, (reached, retained, by_size) in want.items():
            name = name.replace("PROG", prog)
            with self.subTest(root=name):
                self.assertIn(name, labels)
                x = labels[name]
                self.assertEqual((x["reached"], x["retained"]), (reached, retained))
                got = {}
                for sid, nbytes, _ in x["ctx"]:
                    got[sizes[sid]] = got.get(sizes[sid], 0) + nbytes
                self.assertEqual(got, by_size)
        shared = {}
        for sid, nbytes, _ in c["shared_ctx"]:
            shared[sizes[sid]] = shared.get(sizes[sid], 0) + nbytes
        self.assertEqual(shared, SHARED)
        unreached = {}
        for sid, *v in c["unreached_ctx"]:
            old = unreached.get(sizes[sid], (0, 0, 0, 0))
            unreached[sizes[sid]] = tuple(a + b for a, b in zip(old, v))
        self.assertEqual(unreached, UNREACHED)
        thread_roots = [x for x in c["roots"] if x["kind"] == 3]
        held = [x for x in thread_roots
                if any(sizes[s] == THREAD_BLOCK for s, _, _ in x["ctx"])]
        self.assertEqual(len(held), 1 if threads else 0, thread_roots)
        # nothing else: every block is one of the program's or the thread's
        # own (its DTV, retained by that thread)
        known = {s for _, _, b in want.values() for s in b} | set(SHARED) | set(UNREACHED)
        extra = {sizes[s] for x in c["roots"] for s, _, _ in x["ctx"]} - known
        self.assertLessEqual(len(extra), 2 if threads else 0, extra)

    def run_case(self, kind, threads):
        args = ["census"] + (["mt"] if threads else [])
        prog, sizes, cs = self.census(kind, args)
        self.assertEqual([c["kind"] for c in cs], [1, 3])
        self.check(prog, sizes, cs[0], ON_DEMAND, threads)
        self.check(prog, sizes, cs[1], AT_EXIT, threads)

    def test_linked(self):
        self.run_case("linked", False)

    def test_linked_threads(self):
        self.run_case("linked", True)

    def test_preloaded(self):
        self.run_case("preloaded", False)

    def test_preloaded_threads(self):
        self.run_case("preloaded", True)

    def test_off_writes_nothing(self):
        exe = self.build("linked")
        harness.run_program(self.scratch, exe, ["census", "mt"])
        self.assertEqual(glob.glob(self.scratch.path("*.roots")), [])

    def test_refused_with_sampling_to_libc(self):
        exe = self.build("linked")
        r, _ = harness.run_program(self.scratch, exe, [], env={
            "MEMPROF_OPTIONS": "roots=1:sample_interval=100"})
        self.assertIn("roots=1 is ignored with sample_interval and unsampled_to_libc=1",
                      r.stderr.decode())
        self.assertEqual(glob.glob(self.scratch.path("*.roots")), [])
        r, _ = harness.run_program(self.scratch, exe, [], env={
            "MEMPROF_OPTIONS": "roots=1:sample_interval=100:unsampled_to_libc=0"})
        self.assertEqual(len(glob.glob(self.scratch.path("*.roots"))), 1)


class RootsReport(harness.ProfTest):
    """memprof-profdata report joins the .roots beside a raw profile:
    retained by root with each root's contexts, leaked apart from still
    reachable, at exit and on demand; merge leaves .roots inputs out; and
    --roots=FILE names one kept elsewhere."""

    def test_report(self):
        exe = harness.compile_program(self.scratch, SRC, out="app", cflags=CFLAGS[2:],
                                      ldflags=["-lpthread"])
        _, raws = harness.run_program(self.scratch, exe, ["census"],
                                      env={"MEMPROF_OPTIONS": "roots=1"})
        raw = [r for r in raws if re.search(r"\.profraw\.\d+$", r)][0]
        out = harness.memprof_profdata("report", raw, f"--profiled-binary={exe}").stdout
        at_exit = out[out.index("Who holds the memory at exit"):]
        on_demand = out[out.index("Who holds the memory on demand"):
                        out.index("Who holds the memory at exit")]
        row = r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\??\s+(\d+)  (.*)$"
        rows = {m.group(6): tuple(int(m.group(k)) for k in range(2, 6))
                for m in re.finditer(row, at_exit, re.M)}
        self.assertEqual(rows["cache (app)"], (3000, 5, 3000, 5))
        self.assertEqual(rows["list_a (app)"], (64, 1, 192, 3))
        self.assertEqual(rows["removed_buf (app)"], (250, 1, 250, 1))
        self.assertEqual(rows["my_named_root (named)"], (200, 1, 200, 1))
        self.assertIn("gone (named)", on_demand)
        self.assertNotIn("gone (named)", at_exit)
        first = list(rows)[0]
        self.assertEqual(first, "cache (app)")  # largest retained first
        leaked = at_exit[at_exit.index("Leaked at exit"):at_exit.index("Still reachable")]
        self.assertIn("Leaked at exit (unreachable): 492 bytes in 3 blocks (direct: 300 "
                      "bytes in 1 blocks", leaked)
        self.assertIn("make_leak", leaked)
        self.assertIn("make_cycle", leaked)
        self.assertNotIn("make_cache", leaked)
        self.assertIn("Still reachable at exit: 4042 bytes in 11 blocks (128 bytes shared",
                      at_exit)
        # per context: the bytes one root retains and those several share
        reachable = at_exit[at_exit.index("Still reachable"):]
        self.assertIn("192 bytes in 3 blocks (64 retained by one root, 128 shared)\n"
                      "      make_list", reachable)
        self.assertIn("2000 bytes in 4 blocks (2000 retained by one root, 0 shared)\n"
                      "      make_cache", reachable)
        cache_part = at_exit[at_exit.index("cache (app)"):at_exit.index("list_a (app)")]
        self.assertIn("2000 bytes in 4 blocks\n      make_cache", cache_part)
        # a glob of the run's files takes the .roots along: merge leaves it out
        merged = self.scratch.path("m.memprofdata")
        r = harness.memprof_profdata("merge", *sorted(glob.glob(raw + "*")),
                                     f"--profiled-binary={exe}", "-o", merged)
        self.assertTrue(os.path.getsize(merged) > 0, r.stderr)

    def test_roots_option(self):
        exe = harness.compile_program(self.scratch, SRC, out="app", cflags=CFLAGS[2:],
                                      ldflags=["-lpthread"])
        raws = []
        for args in (["census"], ["mt"]):
            _, got = harness.run_program(self.scratch, exe, args,
                                         env={"MEMPROF_OPTIONS": "roots=1"})
            raws += [r for r in got if re.search(r"\.profraw\.\d+$", r)]
        moved = [self.scratch.path(f"elsewhere{i}.roots") for i in range(2)]
        for raw, m in zip(raws, moved):
            os.rename(raw + ".roots", m)
        binary = f"--profiled-binary={exe}"
        out = harness.memprof_profdata("report", raws[0], binary).stdout
        self.assertNotIn("Who holds the memory", out)
        out = harness.memprof_profdata("report", raws[0], binary, f"--roots={moved[0]}").stdout
        self.assertIn("Who holds the memory on demand", out)
        self.assertIn("Leaked at exit (unreachable): 492 bytes in 3 blocks", out)
        # the other run's file: written for a raw profile of another size
        # (the thread's block makes the raw profiles differ)
        self.assertNotEqual(os.path.getsize(raws[0]), os.path.getsize(raws[1]))
        r = harness.memprof_profdata("report", raws[0], binary, f"--roots={moved[1]}",
                                     check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"{moved[1]}: roots file at offset", r.stderr)
        self.assertIn("written for a raw profile of", r.stderr)
        r = harness.memprof_profdata("report", raws[0], binary, f"--roots={moved[0]}",
                                     f"--roots={moved[1]}", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("2 --roots files for 1 raw input", r.stderr)


class AgainstLeakSanitizer(harness.ProfTest):
    """LeakSanitizer's leaked total on the same source is the census's
    unreached total at exit, one thread and two."""

    def lsan(self, args):
        exe = self.scratch.path("lsan")
        harness.run(["clang-22", "-fsanitize=leak", *CFLAGS, SRC, "-o", exe, "-lpthread"])
        r = harness.run([exe, *args], check=False,
                        env=dict(os.environ, LSAN_OPTIONS="exitcode=23"))
        if "LeakSanitizer has encountered a fatal error" in r.stderr:
            self.skipTest("LeakSanitizer cannot run here (ptrace)")
        m = re.search(r"SUMMARY: LeakSanitizer: (\d+) byte\(s\) leaked in (\d+) allocation",
                      r.stderr)
        self.assertIsNotNone(m, r.stderr)
        direct = sum(int(n) for n in re.findall(r"Direct leak of (\d+) byte", r.stderr))
        return (int(m.group(1)), int(m.group(2))), direct

    def ours(self, args):
        exe = harness.compile_program(self.scratch, SRC, out="linked", cflags=CFLAGS[2:],
                                      ldflags=["-lpthread"])
        _, raws = harness.run_program(self.scratch, exe, args,
                                      env={"MEMPROF_OPTIONS": "roots=1"})
        raw = [r for r in raws if re.search(r"\.profraw\.\d+$", r)][0]
        with open(raw + ".roots", "rb") as f:
            c = rf.decode(f.read())["census"][-1]
        return (c["unreached"][0], c["unreached"][1]), c["unreached"][2]

    def test_same_leaks(self):
        if not shutil.which("clang-22"):
            self.skipTest("clang-22 missing")
        for args in ([], ["mt"]):
            with self.subTest(args=args):
                (leaked, direct) = self.lsan(args)
                self.assertEqual(leaked, LSAN_LEAKED)
                self.assertEqual(self.ours(args), (leaked, direct))


if __name__ == "__main__":
    harness.main()
