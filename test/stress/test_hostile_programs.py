"""test_hostile_programs.py - programs that push the runtime past ordinary
use (hostile.c): 1000 short-lived threads, allocation sizes no allocator
can give, stacks deeper than malloc_context_size, 512 distinct contexts,
posix_spawn / fork+exec / vfork while threads allocate.  Each must exit 0
within its timeout and leave exactly one readable profile with the exact
per-site counts.  A full disk (a 16 KiB tmpfs, root only) must leave the
program's exit status alone, be reported, and leave no file the reader
takes for a whole profile.  Runtime: ours unless MEMPROF_STRESS_RUNTIME=llvm.
"""
import os
import subprocess
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.environ.get("MEMPROF_STRESS_RUNTIME", "ours")


class HostileProgramsTest(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.build = harness.Scratch("hostile-build")
        cls.exe = harness.compile_program(cls.build, os.path.join(HERE, "hostile.c"),
                                          runtime=RUNTIME, ldflags=["-lpthread"])

    @classmethod
    def tearDownClass(cls):
        cls.build.cleanup()

    def profile_of(self, mode, opts=""):
        try:
            r, profs = harness.run_program(self.scratch, self.exe, [mode], check=False,
                                           env={"MEMPROF_OPTIONS": opts}, timeout=60)
        except subprocess.TimeoutExpired:
            self.fail(f"hostile {mode}: no exit in 60 s (deadlock?)")
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace")[-2000:])
        self.assertEqual(len(profs), 1, f"{mode}: profiles {profs}")
        return harness.llvm_show_raw(profs[0], self.exe)

    def sites_of(self, sites, leaf):
        return [(s["mib"]["AllocCount"], s["mib"]["TotalSize"]) for s in sites
                if s["stack"][0][0] == leaf]

    def test_thousand_threads(self):
        sites = self.profile_of("threads1000")
        self.assertEqual(self.sites_of(sites, "site_thr"), [(1000, 16000)])

    def test_impossible_sizes_fail_cleanly(self):
        if RUNTIME == "llvm":
            self.skipTest("LLVM 22 writes its allocation-failure warnings into "
                          "the profile file, which llvm-profdata then refuses")
        sites = self.profile_of("bad_sizes", "allocator_may_return_null=1")
        # the block freed by realloc(p, 0), and four from the loop
        self.assertEqual(sorted(self.sites_of(sites, "site_ok")), [(1, 24), (4, 96)])

    def test_stack_deeper_than_context_size(self):
        sites = self.profile_of("deep")
        hits = [s for s in sites if s["stack"][0][0] == "site_deep"]
        self.assertEqual(len(hits), 1)
        self.assertEqual((hits[0]["mib"]["AllocCount"], hits[0]["mib"]["TotalSize"]),
                         (3, 96))
        # 30 PCs at most; the runtime's own frame is dropped by the reader.
        self.assertLessEqual(len(hits[0]["stack"]), 30)
        self.assertEqual([f[0] for f in hits[0]["stack"][1:4]], ["recurse"] * 3)

    def test_many_contexts(self):
        sites = self.profile_of("many")
        got = self.sites_of(sites, "site_many")
        self.assertEqual(len(got), 512)
        self.assertEqual(set(got), {(2, 16)})

    def test_spawn_fork_exec_vfork_while_threads_allocate(self):
        sites = self.profile_of("spawn")
        self.assertEqual(self.sites_of(sites, "site_spawn"), [(5, 240)])
        (n, size), = self.sites_of(sites, "site_thr")
        self.assertEqual(size, 16 * n)


class FullDiskTest(harness.ProfTest):
    def test_profile_on_full_disk(self):
        exe = harness.compile_program(self.scratch, os.path.join(HERE, "hostile.c"),
                                      runtime=RUNTIME, ldflags=["-lpthread"])
        disk = self.scratch.path("disk")
        os.mkdir(disk)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", disk],
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.skipTest("cannot mount a small tmpfs (needs root)")
        try:
            r, _ = harness.run_program(self.scratch, exe, ["many"], check=False,
                                       env={"MEMPROF_OPTIONS": f"log_path={disk}/prof"},
                                       timeout=60)
            # A profile that could not be written makes the status 1 (ours).
            self.assertEqual(r.returncode, 1 if RUNTIME == "ours" else 0,
                             r.stderr.decode(errors="replace"))
            if RUNTIME == "ours":
                self.assertIn(b"writing the profile failed", r.stderr)
            tool = harness.profdata_tool()
            for name in os.listdir(disk):
                path = os.path.join(disk, name)
                t = subprocess.run([tool, "show", path, f"--profiled-binary={exe}"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   timeout=60)
                self.assertEqual(t.returncode, 1)
                self.assertIn(b"truncated file?", t.stderr)
        finally:
            subprocess.run(["umount", disk])


if __name__ == "__main__":
    harness.main()
