"""Runtime core: process lifecycle and stacks - fork (also while other
threads allocate and dump), _exit and _Exit, deadly and termination
signals, exit ordering (atexit handlers run before the exit dump), large live blocks (reported, unlike LLVM 22),
thread stacks and malloc_context_size, dumps concurrent with threads and
with dlopen.  Each program is in progs/."""
import os
import re
import signal
import subprocess

import harness
from harness import read_raw


class LifecycleTest(harness.ProfTest):
    def build(self, name):
        """progs/`name`, instrumented and linked with our runtime."""
        return harness.compile_program(self.scratch, harness.prog_path(__file__, name))

    def test_fork_child_writes_own_records(self):
        exe = self.build("fork_records.c")
        _, profs = harness.run_program(self.scratch, exe)
        self.assertEqual(len(profs), 2)
        by_kind = {}
        for f in profs:
            (d,) = read_raw(f)
            sizes = harness.mibs_by_size(d)
            by_kind["child" if 96 in sizes else "parent"] = sizes
        parent, child = by_kind["parent"], by_kind["child"]
        self.assertEqual(parent[256]["TotalAccessCount"], 1)
        self.assertEqual(parent[128]["TotalAccessCount"], 2)
        self.assertNotIn(96, parent)
        # The child drops the parent's records but keeps inherited blocks.
        self.assertNotIn(128, child)
        self.assertEqual(child[96]["TotalAccessCount"], 3)
        self.assertEqual(child[256]["TotalAccessCount"], 2)

    def test_fork_while_threads_allocate_and_dump(self):
        """Every runtime lock is held across fork: children forked while
        other threads allocate, free and dump can allocate and dump."""
        exe = self.build("fork_with_threads.c")
        r, profs = harness.run_program(self.scratch, exe, timeout=60)
        self.assertEqual(r.stdout.decode(), "children ok 40\n")
        children = []
        for f in profs:
            dumps = [harness.mibs_by_size(d) for d in read_raw(f)]
            if any(6000 in sizes for sizes in dumps):
                # the child's own dump, then _exit's (dump_at__exit), which
                # the first one's records are not in again
                self.assertEqual(len(dumps), 2)
                self.assertNotIn(6000, dumps[1])
                children.append(dumps[0])
        self.assertEqual(len(children), 40)
        for sizes in children:
            self.assertEqual((sizes[6000]["AllocCount"], sizes[6000]["TotalAccessCount"]),
                             (1, 2))

    def test_segv_dumps_and_exits_1(self):
        # As LLVM's runtime: dump, then exit status 1 (not death by signal).
        exe = self.build("deadly_signals.c")
        r, profs = harness.run_program(self.scratch, exe, ["s"], check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"MemProfiler:DEADLYSIGNAL", r.stderr)
        self.assertEqual(len(profs), 1)
        (d,) = read_raw(profs[0])
        self.assertEqual(harness.mibs_by_size(d)[64]["TotalAccessCount"], 3)

    def test_abort_only_with_handle_abort(self):
        exe = self.build("deadly_signals.c")
        r, profs = harness.run_program(self.scratch, exe, ["a"], check=False)
        self.assertEqual(r.returncode, -6)
        self.assertEqual(profs, [])
        r, profs = harness.run_program(self.scratch, exe, ["a"], check=False,
                                       env={"MEMPROF_OPTIONS": "handle_abort=1"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(profs), 1)
        (d,) = read_raw(profs[0])
        self.assertEqual(harness.mibs_by_size(d)[64]["TotalAccessCount"], 3)

    def test_normal_exit_code_kept(self):
        exe = self.build("deadly_signals.c")
        r, profs = harness.run_program(self.scratch, exe, ["x"], check=False)
        self.assertEqual(r.returncode, 3)
        self.assertEqual(len(profs), 1)

    def test_underscore_exit_dumps(self):
        """_exit and _Exit end the process without exit's handlers; the
        profile is written there too (dump_at__exit), with the program's
        status, but not by a vfork child, which shares its parent's
        memory: the parent's profile stays whole."""
        exe = self.build("quick_exit.c")
        r, profs = harness.run_program(self.scratch, exe, ["f"])
        self.assertEqual(r.stdout.decode(), "child exit 5\n")
        self.assertEqual(len(profs), 2)
        child = [harness.mibs_by_size(d) for f in profs for d in read_raw(f)
                 if 96 in harness.mibs_by_size(d)]
        self.assertEqual(len(child), 1)
        self.assertEqual((child[0][96]["AllocCount"], child[0][96]["TotalAccessCount"]), (1, 3))
        self.assertNotIn(64, child[0])  # the parent's records stay the parent's
        r, profs = harness.run_program(self.scratch, exe, ["v"])
        self.assertEqual(r.stdout.decode(), "child exit 7\n")
        (prof,) = profs
        (d,) = read_raw(prof)
        self.assertEqual(harness.mibs_by_size(d)[64]["TotalAccessCount"], 2)
        for mode, status in (("s", 4), ("e", 6)):
            r, profs = harness.run_program(self.scratch, exe, [mode], check=False)
            self.assertEqual(r.returncode, status, mode)
            (prof,) = profs
            (d,) = read_raw(prof)
            self.assertEqual(harness.mibs_by_size(d)[64]["TotalAccessCount"], 2, mode)
        # as LLVM's runtime: only exit writes the profile
        r, profs = harness.run_program(self.scratch, exe, ["f"],
                                       env={"MEMPROF_OPTIONS": "dump_at__exit=0"})
        self.assertEqual(len(profs), 1)
        r, profs = harness.run_program(self.scratch, exe, ["e"], check=False,
                                       env={"MEMPROF_OPTIONS": "dump_at__exit=0"})
        self.assertEqual((r.returncode, profs), (6, []))

    def signalled(self, exe, sig, args=(), options=""):
        """Runs exe until it says "ready", sends it sig; (status, stdout,
        profiles)."""
        before = set(os.listdir(self.scratch.dir))
        env = dict(os.environ, MEMPROF_OPTIONS=options)
        p = subprocess.Popen([exe, *args], cwd=self.scratch.dir, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.assertEqual(p.stdout.readline(), b"ready\n")
        p.send_signal(sig)
        out = p.stdout.read().decode()
        status = p.wait(timeout=60)
        profs = sorted(self.scratch.path(f) for f in set(os.listdir(self.scratch.dir)) - before
                       if f.startswith("memprof.profraw"))
        return status, out, profs

    def test_termination_signals(self):
        """With handle_sigterm=1, SIGTERM left at its default action writes
        the profile (the live block in it), then kills the process by
        SIGTERM as before; by default it writes none, as LLVM's runtime; a
        program's own handler stays its own.  The same for SIGINT with
        handle_sigint=1."""
        exe = self.build("terminated.c")
        status, _, profs = self.signalled(exe, signal.SIGTERM, options="handle_sigterm=1")
        self.assertEqual(status, -signal.SIGTERM)
        (prof,) = profs
        (d,) = read_raw(prof)
        self.assertEqual(harness.mibs_by_size(d)[64]["TotalAccessCount"], 2)
        status, _, profs = self.signalled(exe, signal.SIGTERM)
        self.assertEqual((status, profs), (-signal.SIGTERM, []))
        status, out, profs = self.signalled(exe, signal.SIGTERM, ["h"], "handle_sigterm=1")
        self.assertEqual((status, out, len(profs)), (9, "own handler\n", 1))
        status, _, profs = self.signalled(exe, signal.SIGINT)
        self.assertEqual((status, profs), (-signal.SIGINT, []))
        status, _, profs = self.signalled(exe, signal.SIGINT, options="handle_sigint=1")
        self.assertEqual((status, len(profs)), (-signal.SIGINT, 1))

    def test_exit_dump_after_atexit_and_destructors(self):
        exe = self.build("exit_order.c")
        _, profs = harness.run_program(self.scratch, exe)
        (d,) = read_raw(profs[0])
        s = harness.mibs_by_size(d)
        # bye() ran before the dump: the block was freed with 3 accesses.
        self.assertEqual(s[50]["TotalAccessCount"], 3)
        # The program's destructor also ran first: its block is live.
        self.assertEqual(s[24]["TotalAccessCount"], 1)

    def test_large_live_blocks_reported(self):
        exe = self.build("large_live.c")
        _, profs = harness.run_program(self.scratch, exe)
        (d,) = read_raw(profs[0])
        s = harness.mibs_by_size(d)
        self.assertEqual(s[1 << 20]["TotalAccessCount"], 16384)
        self.assertEqual(s[300000]["TotalAccessCount"], 3000)
        self.assertEqual(s[200000]["TotalAccessCount"], 200)
        sites = harness.llvm_show_raw(profs[0], exe)
        marks = harness.marked_sites(harness.prog_text(__file__, "large_live.c"))
        self.assertEqual(harness.site_by_line(sites, *marks["big"])["mib"]["TotalSize"],
                         1 << 20)

    def test_thread_stacks_and_depth(self):
        exe = self.build("thread_stacks.c")
        _, profs = harness.run_program(self.scratch, exe)
        sites = harness.llvm_show_raw(profs[0], exe)
        workers = [s for s in sites if s["stack"][-1][0] == "worker"]
        self.assertEqual(len(workers), 1)
        w = workers[0]
        self.assertEqual([f[0] for f in w["stack"]], ["deep"] * 4 + ["worker"])
        self.assertEqual(w["mib"]["AllocCount"], 400)
        self.assertEqual(w["mib"]["TotalAccessCount"], 40000)
        (d,) = read_raw(profs[0])
        deep = [i for i, m in d["mibs"].items() if m["TotalSize"] == 64]
        self.assertEqual(len(d["stacks"][deep[0]]), 30)  # malloc_context_size
        _, profs = harness.run_program(self.scratch, exe,
                                       env={"MEMPROF_OPTIONS": "malloc_context_size=5"})
        (d,) = read_raw(profs[-1])
        self.assertEqual({len(s) for s in d["stacks"].values() if len(s) > 1}, {5})

    def test_one_frame_stacks_exact(self):
        """Stacks of one frame (malloc_context_size=1, or code without frame
        pointers) are looked up through a small per-thread cache: 200
        interleaved sites must still give 200 distinct stacks, each with
        exactly its own counts."""
        # 200 call sites, each its own function allocating blocks of its own size
        # (16 + i bytes, written once), site i (i % 7) + 1 times per round, the sites
        # interleaved: with one-frame stacks far more of them than the runtime's
        # per-thread cache of recent one-frame stacks has slots.
        exe = harness.compile_program(
            self.scratch, harness.prog_path(__file__, "one_frame_sites.c"),
            out="one", cflags=["-fomit-frame-pointer"], opt="-O2")
        for env in ({"MEMPROF_OPTIONS": "malloc_context_size=1"}, {}):
            with self.subTest(env=env):
                _, profs = harness.run_program(self.scratch, exe, env=env)
                (d,) = read_raw(profs[-1])
                start, end = d["segments"][0][:2]
                by_size = {}
                for sid, m in d["mibs"].items():
                    if start <= d["stacks"][sid][0] < end and m["MinSize"] == m["MaxSize"]:
                        by_size.setdefault(m["MinSize"], []).append((sid, m))
                for i in range(200):
                    recs = by_size.get(16 + i, [])
                    self.assertEqual(len(recs), 1, f"site {i}: {len(recs)} stacks")
                    sid, m = recs[0]
                    n = 50 * (i % 7 + 1)
                    self.assertEqual((m["AllocCount"], m["TotalSize"], m["TotalAccessCount"]),
                                     (n, n * (16 + i), n), f"site {i}")
                    if env:
                        self.assertEqual(len(d["stacks"][sid]), 1)
                firsts = [d["stacks"][recs[0][0]][0] for recs in by_size.values()
                          if 16 <= recs[0][1]["MinSize"] < 216]
                self.assertEqual(len(set(firsts)), 200)

    def test_dumps_concurrent_with_threads(self):
        exe = self.build("dumps_with_threads.c")
        _, profs = harness.run_program(self.scratch, exe)
        dumps = read_raw(profs[0])
        self.assertEqual(len(dumps), 21)
        allocs, accesses = 0, 0
        for d in dumps:
            # Only the workers' malloc call site: pthread_create's own live
            # TLS blocks (allocated inside ld.so) are in range of sizes too.
            start, end = d["segments"][0][:2]
            for sid, m in d["mibs"].items():
                if start <= d["stacks"][sid][0] < end and \
                        16 <= m["MinSize"] and m["MaxSize"] <= 616:
                    allocs += m["AllocCount"]
                    accesses += m["TotalAccessCount"]
                    self.assertLessEqual(m["MaxAccessCount"], 3)
        # Every freed block is recorded exactly once; a dump may also see up
        # to one live block per thread (each counted with <= 3 accesses).
        self.assertGreaterEqual(allocs, 4 * 20000)
        self.assertLessEqual(allocs, 4 * 20000 + 4 * 21)
        self.assertGreaterEqual(accesses, 3 * 4 * 20000)
        self.assertLessEqual(accesses, 3 * (4 * 20000 + 4 * 21))


    def test_text_dumps_concurrent_with_dlopen(self):
        """A text dump names frames with dladdr (the loader's lock) while a
        thread inside dlopen, holding that lock, frees memory from the
        library's constructor: the dump must not hold the MIB table then.
        The thread loads and unloads the library for as long as the dumps
        last.  Frames are named from dladdr and the ELF symbol table (no
        llvm-symbolizer): dladdr is the call that meets the loader's lock,
        and a symbolizer process started for every dump would be most of
        the test's time."""
        lib_src = harness.prog_path(__file__, "dlopen_ctor_lib.c")
        lib = self.scratch.path("libctor.so")
        harness.run(["clang-22", "-shared", "-fPIC", "-O0", lib_src, "-o", lib])
        exe = harness.compile_program(self.scratch,
                                      harness.prog_path(__file__, "dlopen_dumps.c"),
                                      ldflags=["-ldl"])
        r, profs = harness.run_program(
            self.scratch, exe, [lib], timeout=60,
            env={"MEMPROF_OPTIONS": "print_text=1:print_terse=1:log_path=stdout",
                 "MEMPROF_SYMBOLIZER_PATH": "/nonexistent"})
        self.assertEqual(profs, [])
        out, err = r.stdout.decode(), r.stderr.decode()
        m = re.search(r"^dumps (\d+), loads during them (\d+)$", err, re.M)
        self.assertIsNotNone(m, err)
        self.assertGreater(int(m.group(2)), 0, "no dlopen while the dumps ran")
        # the live block: the one stack whose first call site is in main
        live = set(re.findall(r"^Stack for id (\d+):\n {4}#0 .*\n {4}#1 0x[0-9a-f]+ in main ",
                              out, re.M))
        self.assertEqual(len(live), 1, out[:2000])
        # 200 explicit dumps + the exit dump, each listing the live block.
        self.assertEqual(int(m.group(1)), 200)
        self.assertEqual(len(re.findall(rf"^MIB:{live.pop()}/1/24\.00/24/24/", out, re.M)), 201)
        self.assertEqual(out.count("Stack for id"), out.count("MIB:"))

if __name__ == "__main__":
    harness.main()
