"""test_roots_stop.py - censuses that stop the other threads
(MEMPROF_OPTIONS=roots=1, roots_stop_threads=1 by default) of
progs/roots_stop.c, linked with libmemprof.a and preloaded into a build
without -fmemory-profile:

- a worker that holds one block only in a callee-saved register and
  another only in a dead stack slot below its stack pointer: stopped, the
  first is retained by that thread and the second unreached; with
  roots_stop_threads=0 (its whole stack read as it runs, no register) the
  other way round;
- a thread started by a raw clone (the runtime does not know it: the
  census finds it in /proc/self/task) that holds a block only in a
  register: stopped, it retains the block; with roots_stop_threads=0,
  neither stopped nor scanned, the block is unreached;
- a worker that blocks the census's signal: the first census waits
  roots_stop_wait_ms for it, scans it as it runs and says so; the second
  does not ask it (/proc says it still blocks the signal);
- several threads allocating and freeing while censuses run (on demand and
  at new highs): no deadlock, every census adds up (lib/roots_file.py
  checks the sums), every other thread stopped in each, and, as every
  block is held by a thread's stack or registers, none unreached.

The runtime's verbosity=1 line per census gives the threads stopped."""
import glob
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import harness  # noqa: E402
import roots_file as rf  # noqa: E402

SRC = harness.prog_path(__file__, "roots_stop.c")
IN_REGISTER, BELOW_SP, CLONED = 4444, 5555, 7777
ON_DEMAND, AT_EXIT, AT_HIGH = 1, 3, 4
LINE = re.compile(r"roots census: (\d+) of (\d+) threads stopped in \d+ us, held \d+ us; "
                  r"(\d+) block the signal, (\d+) did not answer, (\d+) ended")


def sizes_of(raw):
    """{stack id: block size} from the raw profile's MIBs."""
    prof = harness.read_raw(raw)[-1]
    return {sid: m["MaxSize"] for sid, m in prof["mibs"].items()}


class RootsStop(harness.ProfTest):
    def build(self, kind):
        if kind == "linked":
            return harness.compile_program(self.scratch, SRC, out="linked",
                                           ldflags=["-lpthread"])
        exe = self.scratch.path("plain")
        harness.run(["clang-22", "-g", "-O0", SRC, "-o", exe, "-lpthread"])
        return exe

    def run_prog(self, kind, args, options):
        exe = self.build(kind)
        env = {"MEMPROF_OPTIONS": "roots=1:verbosity=1" + options}
        if kind == "preloaded":
            env["LD_PRELOAD"] = harness.find_built("libmemprof.so")
        r, raws = harness.run_program(self.scratch, exe, args, env=env, timeout=300)
        raws = [x for x in raws if re.search(r"\.profraw\.\d+$", x)]
        self.assertEqual(len(raws), 1, raws)
        with open(raws[0] + ".roots", "rb") as f:
            roots = rf.decode(f.read())
        stderr = r.stderr.decode()
        return raws[0], roots["census"], stderr, [tuple(map(int, m)) for m in
                                                  LINE.findall(stderr)]

    def hold(self, kind, stop):
        raw, cs, stderr, lines = self.run_prog(
            kind, ["hold"], f":roots_stop_threads={stop}:roots_stop_wait_ms=20000")
        sizes = sizes_of(raw)
        self.assertEqual([c["kind"] for c in cs], [ON_DEMAND, AT_EXIT])
        c = cs[0]
        held = {}
        for x in c["roots"]:
            if x["kind"] == 3:
                for sid, nbytes, _ in x["ctx"]:
                    if sizes[sid] in (IN_REGISTER, BELOW_SP):
                        held[sizes[sid]] = (x["offset"], nbytes)
        unreached = {sizes[sid]: tuple(v) for sid, *v in c["unreached_ctx"]}
        in_thread = IN_REGISTER if stop else BELOW_SP
        lost = BELOW_SP if stop else IN_REGISTER
        self.assertEqual(list(held), [in_thread])
        self.assertEqual(held[in_thread][1], in_thread)
        self.assertEqual(unreached, {lost: (lost, 1, lost, 1)})
        self.assertEqual(c["unreached"], (lost, 1, lost, 1))
        # the worker (not the main thread, which takes the census) holds it
        self.assertNotEqual(held[in_thread][0], int(re.search(r"\.(\d+)$", raw).group(1)))
        # one line per census with the option on: the worker, then none
        self.assertEqual(lines, [(1, 1, 0, 0, 0), (0, 0, 0, 0, 0)] if stop else [])

    def test_hold_linked(self):
        self.hold("linked", 1)

    def test_hold_linked_off(self):
        self.hold("linked", 0)

    def test_hold_preloaded(self):
        self.hold("preloaded", 1)

    def test_hold_preloaded_off(self):
        self.hold("preloaded", 0)

    def cloned(self, kind, stop):
        raw, cs, stderr, lines = self.run_prog(
            kind, ["clone"], f":roots_stop_threads={stop}:roots_stop_wait_ms=20000")
        sizes = sizes_of(raw)
        self.assertEqual([c["kind"] for c in cs], [ON_DEMAND, AT_EXIT])
        pid = int(re.search(r"\.(\d+)$", raw).group(1))
        held = [(x["offset"], nbytes) for x in cs[0]["roots"] if x["kind"] == 3
                for sid, nbytes, _ in x["ctx"] if sizes[sid] == CLONED]
        if stop:
            self.assertEqual(len(held), 1, cs[0]["roots"])
            self.assertNotEqual(held[0][0], pid)
            self.assertEqual(held[0][1], CLONED)
            self.assertEqual(cs[0]["unreached"], (0, 0, 0, 0))
            self.assertEqual(lines, [(1, 1, 0, 0, 0), (0, 0, 0, 0, 0)])
            self.assertIn("; 1 not started by the runtime", stderr)
        else:
            self.assertEqual(held, [])
            self.assertEqual(cs[0]["unreached"], (CLONED, 1, CLONED, 1))
            self.assertEqual(lines, [])
        # the thread ended without freeing it
        self.assertEqual(cs[1]["unreached"], (CLONED, 1, CLONED, 1))

    def test_clone_linked(self):
        self.cloned("linked", 1)

    def test_clone_preloaded(self):
        self.cloned("preloaded", 1)

    def test_clone_preloaded_off(self):
        self.cloned("preloaded", 0)

    def test_blocked_signal(self):
        t0 = time.monotonic()
        _, cs, stderr, lines = self.run_prog("linked", ["block"], ":roots_stop_wait_ms=300")
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)
        self.assertEqual([c["kind"] for c in cs], [ON_DEMAND, ON_DEMAND, AT_EXIT])
        self.assertEqual(lines, [(0, 1, 0, 1, 0), (0, 1, 1, 0, 0), (0, 0, 0, 0, 0)])
        self.assertEqual(stderr.count("WARNING: roots census: "), 1, stderr)
        self.assertIn("threads that block signal 61: 0, that did not stop within 300 ms: 1;",
                      stderr)

    def stress(self, kind, stop):
        threads = 6
        _, cs, stderr, lines = self.run_prog(
            kind, ["stress", str(threads), "3000"],
            f":roots_peak_step_kb=64:roots_stop_threads={stop}:roots_stop_wait_ms=20000")
        kinds = [c["kind"] for c in cs]
        self.assertEqual(kinds[-1], AT_EXIT)
        # 3000 steps: 46 censuses on demand per thread
        self.assertEqual(kinds.count(ON_DEMAND), threads * (3000 // 64))
        self.assertGreaterEqual(kinds.count(AT_HIGH), 1)
        self.assertNotIn("WARNING", stderr)
        # at exit every worker has ended: glibc's stack cache (in ld.so's
        # _rtld_global) holds the DTVs of those whose stacks it kept,
        # nothing is unreached
        ended = [x for x in cs[-1]["roots"] if x["name"] == "_rtld_global"]
        self.assertEqual(len(ended), 1)
        self.assertGreaterEqual(ended[0]["retained"][1], 1)
        self.assertLessEqual(ended[0]["retained"][1], threads)
        self.assertEqual(cs[-1]["unreached"], (0, 0, 0, 0))
        if not stop:
            self.assertEqual(lines, [])
            return
        # every other thread (the other workers and the main thread) stopped
        self.assertEqual(lines[:-1], [(threads, threads, 0, 0, 0)] * (len(cs) - 1))
        self.assertEqual(lines[-1], (0, 0, 0, 0, 0))
        for c in cs[:-1]:
            self.assertEqual(c["unreached"], (0, 0, 0, 0), c["kind"])

    def test_stress_linked(self):
        self.stress("linked", 1)

    def test_stress_preloaded(self):
        self.stress("preloaded", 1)

    def test_stress_linked_off(self):
        self.stress("linked", 0)


if __name__ == "__main__":
    harness.main()
