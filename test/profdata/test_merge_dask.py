"""The fleet merge on a distributed engine: scripts/dask-tree-merge.py
merges 300 raw profiles as a tree of `memprof-profdata merge` tasks on
Dask (Debian's python3-distributed) and must write the bytes of one
`memprof-profdata merge` of all of them.

300 processes of progs/fleet.c (seeds 1..300) write the raw profiles.
The tree runs on a LocalCluster of two workers (the recipe's default),
and, with the inputs shuffled, other shard sizes and fan-ins and the
files' bytes moved through Dask, on a scheduler and two workers started
as processes of their own (`dask-scheduler`, `dask-worker`), as on a
real cluster.  A damaged input must stop the job with a message naming it,
exit status 1 and no output file.  Skipped when no python3 here has
dask.distributed."""
import concurrent.futures
import glob
import os
import random
import shutil
import socket
import subprocess
import sys
import unittest

import harness

SRC = harness.prog_path(__file__, "fleet.c")
RECIPE = os.path.join(harness.ROOT, "scripts", "dask-tree-merge.py")
N_PROFILES = 300


def dask_python():
    """A python3 that can import dask.distributed (Debian's is
    /usr/bin/python3; the one on PATH may be another build), or None."""
    for py in dict.fromkeys([sys.executable, "/usr/bin/python3", shutil.which("python3")]):
        if py and harness.run([py, "-c", "import dask.distributed"],
                              check=False).returncode == 0:
            return py
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_profiles(scratch, exe, n):
    """Run `exe SEED` for seeds 1..n, two at a time; their raw profiles."""
    def one(seed):
        subprocess.run([exe, str(seed)], cwd=scratch.dir, check=True, timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(one, range(1, n + 1)))
    return sorted(glob.glob(scratch.path("memprof.profraw.*")))


class DaskTreeMerge(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.python = dask_python()
        if cls.python is None:
            raise unittest.SkipTest("python3-distributed is not installed")
        cls.fleet = harness.Scratch("dask-fleet")
        cls.cluster = []
        try:
            cls.address = cls.start_cluster()
            cls.exe = harness.compile_program(cls.fleet, SRC, out="fleet")
            cls.raws = make_profiles(cls.fleet, cls.exe, N_PROFILES)
        except BaseException:
            cls.tearDownClass()
            raise
        assert len(cls.raws) == N_PROFILES, len(cls.raws)
        cls.want = cls.fleet.path("one-shot.memprofdata")
        harness.memprof_profdata("merge", *cls.raws, f"--profiled-binary={cls.exe}",
                                 "-o", cls.want)
        with open(cls.want, "rb") as f:
            cls.want_bytes = f.read()

    @classmethod
    def start_cluster(cls):
        """What the recipe runs on a real cluster: a scheduler and a worker
        process per machine (here two, on this one), started while the
        profiles are made; returns the scheduler's address."""
        port = free_port()
        log = open(cls.fleet.path("cluster.log"), "w")
        def start(*args):
            cls.cluster.append(subprocess.Popen([cls.python, "-m", *args], stdout=log,
                                                stderr=log, cwd=cls.fleet.dir))
        start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
              "--no-dashboard")
        address = f"tcp://127.0.0.1:{port}"
        for i in range(2):
            start("distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
                  "--no-dashboard", "--name", f"w{i}", "--local-directory", cls.fleet.dir)
        log.close()
        return address

    @classmethod
    def tearDownClass(cls):
        for p in reversed(cls.cluster):
            p.terminate()
        for p in cls.cluster:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        cls.fleet.cleanup()

    def setUp(self):
        self.scratch = harness.Scratch(self.id().split(".")[-1])

    def tearDown(self):
        self.scratch.cleanup()

    def recipe(self, inputs, out, *flags, check=True):
        """Run the recipe; with `check`, assert that it succeeded (printing
        its stderr, not the 300 input names)."""
        r = harness.run([self.python, RECIPE, "--tool", harness.profdata_tool(),
                         f"--profiled-binary={self.exe}", *flags, "-o", out, *inputs],
                        check=False, timeout=300)
        if check:
            self.assertEqual(r.returncode, 0, f"dask-tree-merge.py {' '.join(flags)}:\n"
                             f"{r.stderr}")
        return r

    def read(self, path):
        with open(path, "rb") as f:
            return f.read()

    def test_local_cluster_gives_the_one_shot_file(self):
        # The default: a LocalCluster of two worker processes.  300 inputs
        # in shards of 16: 19 leaf merges, then 5, 2 and 1 merges of up to
        # 4 partial results.
        out = self.scratch.path("tree.memprofdata")
        self.recipe(self.raws, out, "--shard-size=16", "--fan-in=4")
        self.assertEqual(self.read(out), self.want_bytes)
        # Only the output is left next to it (the work folder is gone).
        self.assertEqual(os.listdir(self.scratch.dir), ["tree.memprofdata"])

    def test_cluster_shuffled_other_fan_ins_and_shipped_bytes(self):
        shuffled = self.raws[:]
        random.Random(36).shuffle(shuffled)
        for name, flags in [("paths", ["--shard-size=7", "--fan-in=3"]),
                            ("bytes", ["--shard-size=50", "--fan-in=2", "--ship-bytes"])]:
            with self.subTest(name):
                out = self.scratch.path(f"{name}.memprofdata")
                self.recipe(shuffled, out, "--scheduler", self.address, *flags)
                self.assertEqual(self.read(out), self.want_bytes)

    def test_damaged_input_is_named_and_nothing_written(self):
        inputs = self.raws[:40]
        damaged = self.scratch.path("damaged.profraw")
        with open(damaged, "wb") as f:
            f.write(self.read(inputs[17])[:500])
        inputs = inputs[:17] + [damaged] + inputs[18:]
        out = self.scratch.path("out.memprofdata")
        for flags in [[], ["--ship-bytes"]]:
            with self.subTest(flags=flags):
                r = self.recipe(inputs, out, "--scheduler", self.address, "--shard-size=8",
                                *flags, check=False)
                self.assertEqual(r.returncode, 1)
                self.assertTrue(r.stderr.startswith("dask-tree-merge: error: "), r.stderr)
                self.assertIn(f"memprof-profdata: error: {damaged}: dump at offset 0x0: "
                              "TotalSize", r.stderr)
                self.assertEqual(sorted(os.listdir(self.scratch.dir)), ["damaged.profraw"])
        missing = self.scratch.path("missing.profraw")
        r = self.recipe(inputs + [missing], out, "--scheduler", self.address, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, f"dask-tree-merge: error: {missing}: not a readable file\n")
        self.assertEqual(sorted(os.listdir(self.scratch.dir)), ["damaged.profraw"])


if __name__ == "__main__":
    harness.main()
