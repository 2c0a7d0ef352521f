"""test_real_programs.py - uninstrumented system programs with our runtime
preloaded (LD_PRELOAD=libmemprof.so) must behave as they do on glibc's
malloc: the same stdout, exit status and output files as a run without
it, and every process they start must write a profile that our tool reads.

Each case runs its command twice, plain, then with our runtime and
marker.c's library preloaded and MEMPROF_OPTIONS=log_path=<scratch>/prof<N>/p.
Every profile file must hold one dump (checked by harness.read_raw, our
own strict reader); the executable it came from is found among the case's
expected writers by build id, and `memprof-profdata show`, given the
marker library and every module of the writer that is in the profile,
must read it and find the marker's block (one allocation of 4321 bytes)
as one context.  The programs carry no debug information: apart from the
marker, only contexts through libc (libc6-dbg, when installed) can be
symbolized.  `memprof-profdata report` of each profile, with no
--profiled-binary, must find the modules itself and keep every byte and
the marker's context.  Every expected writer must have written a profile.

RealProgramsRoots runs every case again with roots=1: each process also
writes its .roots file, whose every census adds up, the last at exit, and
its report says who holds the memory.

RealProgramsSampled runs every case again with sample_interval=64 and
unsampled_to_libc=1, most blocks then served by glibc's malloc behind ours
(the default preloaded serves them from the profiler's heap, as
RealPrograms does).

node (work.js: worker threads) and java (Work.java, run as a source
file) are the large multi-threaded programs of the matrix; node's report
must show stacks through its own functions, which its symbol table names
(its debug information covers libuv's objects only) in whichever of its
executable segments they lie.

A program missing from the machine skips its case (visibly); programs
are looked up in /usr/bin and /bin only, so version-manager shims in PATH
are not what gets tested.
"""
import os
import random
import re
import shutil
import subprocess
import unittest

import harness
import roots_file

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM_PATH = "/usr/bin:/bin"
TIMEOUT = 120
MARK_SIZE = 4321  # marker.c's
MARK_GUID = harness.llvm_guid("memprof_test_mark_alloc")


def system_program(name):
    return shutil.which(name, path=SYSTEM_PATH)


def shared_libs(exe):
    """The shared libraries `ldd` lists for exe (real paths)."""
    out = harness.run(["ldd", exe], check=False).stdout
    paths = re.findall(r"=> (/\S+)", out) + re.findall(r"^\s*(/\S+) \(0x", out, re.M)
    return [os.path.realpath(p) for p in paths]


def write_words(path, lines, seed):
    """A text file of `lines` lines of four words each, from a fixed seed."""
    r = random.Random(seed)
    words = ["".join(r.choice("abcdefghijklmnop") for _ in range(r.randint(2, 9)))
             for _ in range(500)]
    with open(path, "w") as f:
        for _ in range(lines):
            f.write(" ".join(r.choice(words) for _ in range(4)) + "\n")


class RealPrograms(harness.ProfTest):
    OPTIONS = ""  # appended to MEMPROF_OPTIONS
    @classmethod
    def setUpClass(cls):
        cls.runtime = harness.find_built("libmemprof.so")
        cls.shared = harness.Scratch("programs-inputs")
        cls.marker = cls.shared.path("libmarker.so")
        harness.run(["clang-22", "-O0", "-g", "-fno-omit-frame-pointer", "-fPIC", "-shared",
                     os.path.join(HERE, "marker.c"), "-o", cls.marker])
        cls.words = cls.shared.path("words.txt")
        write_words(cls.words, 150000, 7)  # about 3.9 MB
        cls.build_ids = {}

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    def need(self, *names):
        """Paths of the named system programs; skips the case if one is missing."""
        paths = [system_program(n) for n in names]
        missing = [n for n, p in zip(names, paths) if not p]
        if missing:
            self.skipTest(f"not installed: {', '.join(missing)}")
        return paths

    def build_id(self, path):
        if path not in self.build_ids:
            try:
                self.build_ids[path] = harness.gnu_build_id(path)
            except AssertionError:
                self.build_ids[path] = None  # no build id: cannot be matched
        return self.build_ids[path]

    # ---- running ----------------------------------------------------------
    def run_both(self, argv, env=None, stdin=None, outputs=(), cwd=None):
        """Run argv plain, then with our runtime preloaded: same stdout, exit
        status and bytes of each file in `outputs` (paths the command
        writes).  Returns the preloaded run's profile paths."""
        cwd = cwd or self.scratch.dir
        base = dict(os.environ, LC_ALL="C", TMPDIR=self.scratch.dir)
        base.pop("LD_PRELOAD", None)
        base.pop("MEMPROF_OPTIONS", None)
        base.update(env or {})
        self.runs = getattr(self, "runs", 0) + 1
        prof_dir = self.scratch.path(f"prof{self.runs}")
        os.mkdir(prof_dir)
        runs = []
        for preload in (False, True):
            e = dict(base)
            if preload:
                e["LD_PRELOAD"] = f"{self.runtime} {self.marker}"
                e["MEMPROF_OPTIONS"] = f"log_path={prof_dir}/p" + self.OPTIONS
            stdin_f = open(stdin, "rb") if stdin else subprocess.DEVNULL
            try:
                r = subprocess.run(argv, cwd=cwd, env=e, stdin=stdin_f, timeout=TIMEOUT,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            except subprocess.TimeoutExpired:
                self.fail(f"{argv[0]} (preloaded={preload}): no exit in {TIMEOUT} s")
            finally:
                if stdin:
                    stdin_f.close()
            files = {}
            for out in outputs:  # None: not written
                if os.path.exists(out):
                    with open(out, "rb") as f:
                        files[out] = f.read()
                    os.unlink(out)
            runs.append((r, files))
        (plain, plain_files), (pre, pre_files) = runs
        what = " ".join(map(str, argv))
        self.assertEqual(pre.returncode, plain.returncode,
                         f"{what}: exit status; preloaded stderr:\n"
                         f"{pre.stderr.decode(errors='replace')[-3000:]}")
        self.assertEqual(pre.stdout, plain.stdout, f"{what}: stdout")
        for out in outputs:
            self.assertIsNotNone(plain_files.get(out), f"{what}: {out} not written")
            self.assertEqual(pre_files.get(out), plain_files[out], f"{what}: {out}")
        return [os.path.join(prof_dir, f) for f in sorted(os.listdir(prof_dir))], plain

    # ---- profiles ---------------------------------------------------------
    def check_profiles(self, profiles, writers, one_each=False):
        """Every profile is one readable dump from one of `writers`
        (executable paths); each writer wrote at least one (exactly one
        with one_each)."""
        modules = {}
        for w in writers:
            for m in [os.path.realpath(w)] + shared_libs(w):
                bid = self.build_id(m)
                if bid:
                    modules.setdefault(w, {})[bid] = m
        written = {w: 0 for w in writers}
        for prof in profiles:
            dumps = harness.read_raw(prof)
            self.assertEqual(len(dumps), 1, f"{prof}: dumps")
            (dump,) = dumps
            ids = {seg[3].hex() for seg in dump["segments"]}
            owners = [w for w in writers
                      if self.build_id(os.path.realpath(w)) in ids]
            self.assertEqual(len(owners), 1, f"{prof}: which of {writers} wrote it")
            w = owners[0]
            written[w] += 1
            bins = [m for bid, m in modules[w].items() if bid in ids] + [self.marker]
            r = harness.memprof_profdata("show", prof,
                                         *[f"--profiled-binary={b}" for b in bins],
                                         check=False)
            self.assertEqual(r.returncode, 0, f"{prof} of {w}: memprof-profdata show "
                             f"failed:\n{r.stderr}")
            ctx = harness.yaml_contexts(harness.parse_memprof_yaml(r.stdout))
            marks = [(mib["AllocCount"], mib["TotalSize"]) for (guid, stack), mib
                     in ctx.items() if guid == MARK_GUID and stack[0][0] == MARK_GUID]
            self.assertEqual(marks, [(1, MARK_SIZE)], f"{prof} of {w}: the marker's block")
            self.check_report(prof, dump, w)
        for w, n in written.items():
            if one_each:
                self.assertEqual(n, 1, f"profiles written by {w}")
            else:
                self.assertGreaterEqual(n, 1, f"profiles written by {w}")
        self.check_programs(profiles, written)

    def check_programs(self, profiles, written):
        """The text report of all the profiles names the programs that
        wrote them (the executable each process ran, from the profile's own
        segment paths), each with its number of profiles."""
        r = harness.memprof_profdata("report", *profiles, check=False)
        self.assertEqual(r.returncode, 0, f"report of all profiles failed:\n{r.stderr}")
        want = {os.path.realpath(w): n for w, n in written.items()}
        label = "programs" if len(want) > 1 else "program"
        line = [ln for ln in r.stdout.splitlines() if ln.startswith(f"  {label} ")]
        self.assertEqual(len(line), 1, r.stdout[:400])
        got = {}
        for item in line[0][len(f"  {label} "):].strip().split(", "):
            m = re.fullmatch(r"(.*?)(?: \((\d+) profiles\))?", item)
            got[m.group(1)] = int(m.group(2) or 1)
        self.assertEqual(got, want, line[0])

    def check_report(self, prof, dump, writer):
        """`report` with no --profiled-binary finds the writer and its
        libraries itself: every byte of the profile is in the folded
        stacks, each context has a frame, and the marker's block is a
        context of its own."""
        r = harness.memprof_profdata("report", prof, "--format=folded", check=False)
        self.assertEqual(r.returncode, 0, f"{prof} of {writer}: report failed:\n{r.stderr}")
        lines = [ln.rsplit(" ", 1) for ln in r.stdout.splitlines() if ln]
        self.assertTrue(all(stack for stack, _ in lines), f"{prof}: a context without frames")
        total = sum(m["TotalSize"] for m in dump["mibs"].values())
        self.assertEqual(sum(int(n) for _, n in lines), total, f"{prof} of {writer}: bytes")
        marks = [n for stack, n in lines if stack.endswith(";memprof_test_mark_alloc")]
        self.assertEqual(marks, [str(MARK_SIZE)], f"{prof} of {writer}: the marker")

    def check_one(self, argv, **kw):
        """run_both for a single-process program; exactly one profile."""
        profs, plain = self.run_both(argv, **kw)
        self.check_profiles(profs, [argv[0]], one_each=True)
        self.assertEqual(len(profs), 1, profs)
        return plain

    # ---- the programs -----------------------------------------------------
    def test_as(self):
        (gcc, as_) = self.need("gcc", "as")
        src = self.scratch.path("torture.s")
        harness.run([gcc, "-S", "-O2", "-g", "-pthread",
                     os.path.join(HERE, "..", "stress", "torture.c"), "-o", src])
        self.check_one([as_, src, "-o", self.scratch.path("torture.o")],
                       outputs=[self.scratch.path("torture.o")])

    def test_gcc_c(self):
        (gcc,) = self.need("gcc")
        cc1 = harness.run([gcc, "-print-prog-name=cc1"]).stdout.strip()
        as_ = system_program(harness.run([gcc, "-print-prog-name=as"]).stdout.strip())
        out = self.scratch.path("torture.o")
        profs, _ = self.run_both([gcc, "-c", "-O2", "-pthread",
                                  os.path.join(HERE, "..", "stress", "torture.c"),
                                  "-o", out], outputs=[out])
        self.check_profiles(profs, [gcc, cc1, as_], one_each=True)

    def test_make_j2(self):
        """make -j2 compiling three files: make, its shells' gcc, cc1 and
        as, each process profiled and reported."""
        make, gcc = self.need("make", "gcc")
        cc1 = harness.run([gcc, "-print-prog-name=cc1"]).stdout.strip()
        as_ = system_program(harness.run([gcc, "-print-prog-name=as"]).stdout.strip())
        src = self.scratch.path("mk")
        os.mkdir(src)
        for i in range(3):
            with open(os.path.join(src, f"u{i}.c"), "w") as f:
                f.write(f"int f{i}(int x) {{ return x * {i + 2}; }}\n")
        with open(os.path.join(src, "Makefile"), "w") as f:
            f.write(f"CC = {gcc}\nall: u0.o u1.o u2.o\n"
                    "%.o: %.c\n\t$(CC) -O2 -c $< -o $@\n")
        outs = [os.path.join(src, f"u{i}.o") for i in range(3)]
        profs, _ = self.run_both([make, "-s", "-j2", "-C", src], outputs=outs)
        self.check_profiles(profs, [make, gcc, cc1, as_])
        self.assertGreaterEqual(len(profs), 10)  # make, and 3 x (gcc, cc1, as)

    def test_python3(self):
        (py,) = self.need("python3")
        self.check_one([py, os.path.join(HERE, "work.py")])

    def test_python3_pool_workers(self):
        """multiprocessing.Pool's forked workers end with os._exit: each
        writes its profile (dump_at__exit), where the pool's work was done."""
        (py,) = self.need("python3")
        profs, _ = self.run_both([py, os.path.join(HERE, "pool_work.py")])
        self.check_profiles(profs, [py])
        self.assertEqual(len(profs), 3)  # the parent and its two workers

    def test_python3_pythonmalloc_malloc(self):
        (py,) = self.need("python3")
        self.check_one([py, os.path.join(HERE, "work.py")], env={"PYTHONMALLOC": "malloc"})

    def test_perl(self):
        (perl,) = self.need("perl")
        self.check_one([perl, os.path.join(HERE, "work.pl")])

    def test_node_workers(self):
        (node,) = self.need("node")
        profs, plain = self.run_both([node, os.path.join(HERE, "work.js")])
        self.check_profiles(profs, [node], one_each=True)
        self.assertEqual(len(plain.stdout.split()), 4)
        # node's own frames: named from its symbol table (its DWARF covers
        # libuv's objects only), each found in its own executable segment
        folded = harness.memprof_profdata("report", profs[0], "--format=folded").stdout
        for frame in ("node::Start(int, char**)", "node::worker::Worker::Run()"):
            self.assertTrue(frame in folded, f"no stack through {frame}")

    def test_java(self):
        (java,) = self.need("java")
        plain = self.check_one([java, "-Xshare:off", os.path.join(HERE, "Work.java")])
        self.assertEqual(plain.stdout, b"5000 19999900000\n")

    def test_git_log(self):
        (git,) = self.need("git")
        repo = self.scratch.path("repo")
        env = dict(os.environ, HOME=self.scratch.dir, GIT_CONFIG_NOSYSTEM="1",
                   GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@example.org",
                   GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@example.org")
        harness.run([git, "init", "-q", repo], env=env)
        for i in range(1, 6):
            with open(os.path.join(repo, f"f{i % 3}.txt"), "a") as f:
                f.write(f"line {i}\n" * i)
            harness.run([git, "-C", repo, "add", "-A"], env=env)
            date = f"2020-01-0{i}T00:00:00+0000"
            harness.run([git, "-C", repo, "commit", "-q", "-m", f"commit {i}"],
                        env=dict(env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date))
        plain = self.check_one([git, "-C", repo, "log", "--stat", "-p", "--format=fuller"],
                               env={"HOME": self.scratch.dir, "GIT_CONFIG_NOSYSTEM": "1",
                                    "GIT_PAGER": "cat"})
        self.assertEqual(plain.stdout.count(b"\ncommit ") + 1, 5)

    def test_sort_threads(self):
        (sort,) = self.need("sort")
        self.check_one([sort, "--parallel=2", self.words])

    def test_sort_external_merge(self):
        # a 200 KiB buffer: the input is sorted in runs through temporary files
        (sort,) = self.need("sort")
        self.check_one([sort, "-S", "200K", "-T", self.scratch.dir, self.words])

    def test_bash(self):
        bash, cat, sort, tail, tr, paste, seq, wc = self.need(
            "bash", "cat", "sort", "tail", "tr", "paste", "seq", "wc")
        profs, plain = self.run_both([bash, os.path.join(HERE, "work.sh")])
        self.assertIn(b"joined abc XYZ", plain.stdout)
        # bash itself and its forked subshells, and the programs it ran
        self.check_profiles(profs, [bash, cat, sort, tail, tr, paste, seq, wc])
        self.assertGreater(len(profs), 8)

    def compressor_round_trip(self, prog, compress, decompress):
        """Compress the words file (same bytes with and without our
        runtime), then decompress that back to the words."""
        (exe,) = self.need(prog)
        profs, plain = self.run_both([exe, *compress, "-c", self.words])
        self.check_profiles(profs, [exe], one_each=True)
        packed = self.scratch.path("words.packed")
        with open(packed, "wb") as f:
            f.write(plain.stdout)
        profs, plain = self.run_both([exe, *decompress, "-c", packed])
        self.check_profiles(profs, [exe], one_each=True)
        with open(self.words, "rb") as f:
            self.assertEqual(plain.stdout, f.read(), "round trip")

    def test_xz_threads(self):
        # 256 KiB blocks: two threads get work (xz's default block is 24 MiB)
        self.compressor_round_trip("xz", ["-T2", "-3", "--block-size=262144"], ["-T2", "-d"])

    def test_zstd_threads(self):
        self.compressor_round_trip("zstd", ["-q", "-T2", "-3", "-B262144"], ["-q", "-d"])


class RealProgramsRoots(RealPrograms):
    """The same with roots=1: beside each profile its .roots file, whose
    censuses all add up (roots_file.decode checks every sum), the last
    one taken at exit; the text report of each profile shows it."""
    OPTIONS = ":roots=1"
    AT_EXIT = 3

    def run_both(self, argv, **kw):
        paths, plain = super().run_both(argv, **kw)
        profs = [p for p in paths if not p.endswith(".roots")]
        roots = [p for p in paths if p.endswith(".roots")]
        self.assertEqual(roots, [p + ".roots" for p in profs], f"{argv[0]}: .roots files")
        for path in roots:
            with open(path, "rb") as f:
                censuses = roots_file.decode(f.read())["census"]
            self.assertEqual(censuses[-1]["kind"], self.AT_EXIT, path)
        return profs, plain

    def check_profiles(self, profiles, writers, one_each=False):
        """Each profile's text report, which reads the .roots file beside
        it (RealPrograms checks the profiles themselves: their writers,
        every byte and frame, the marker)."""
        self.assertTrue(profiles, f"no profile from {writers}")
        for prof in profiles:
            r = harness.memprof_profdata("report", prof, check=False)
            self.assertEqual(r.returncode, 0, f"{prof}: report failed:\n{r.stderr}")
            self.assertIn("Who holds the memory at exit", r.stdout, prof)


class RealProgramsSampled(RealPrograms):
    """The same with sampling at R = 64 bytes: a block of 32 bytes is
    recorded with probability 0.39, so the C library's heap
    (unsampled_to_libc=1) and ours both serve many blocks, and realloc and
    free cross between them.  The marker's block of 4321 bytes is recorded
    with probability 1 - exp(-67) and weighs 1: its context is as exact."""
    OPTIONS = ":sample_interval=64:unsampled_to_libc=1"


if __name__ == "__main__":
    harness.main()
