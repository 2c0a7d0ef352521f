"""test_rt_unwind.py - allocation stacks through code built without frame
pointers (glibc, libstdc++), unwound by the modules' .eh_frame tables.

 - unwind_callers.cc: fopen, getline and std::string's growth allocate
   inside the libraries; the calling function must be the program's first
   frame of each stack (the frame-pointer walk alone skipped it: the
   library's frame leaves its caller's %rbp, whose record returns to the
   caller's caller).  unwind_tables=0 gives those old stacks back.
 - unwind_truth.cc: the runtime's stack of a point in a callback called
   from libc or libstdc++ against glibc's backtrace() (libgcc's unwinder)
   at the same point, frame for frame; malloc_context_size still bounds
   the walk.
 - unwind_cfi_driver.c: the runtime's reader of .eh_frame (rt_cfi.c)
   against readelf's interpretation, row by row, on the system libraries
   and unwind_rbp_lib.S; unwind_rbp.c walks through that library's frame
   (CFA from %rbp, not a frame-pointer record).
 - unwind_dlclose.c: a rule cached for a PC is dropped when its library is
   unloaded and another one is loaded at its address.
 - the shared runtime preloaded into python3, gcc and git.
"""
import os
import re
import subprocess

import harness

HERE = os.path.dirname(os.path.abspath(__file__))


def source(name):
    return os.path.join(HERE, name)


class LibraryCallers(harness.ProfTest):
    """Each marked call allocates inside a library: its site's stack is the
    marked line, then main's marked call, and nothing of the program else."""

    @classmethod
    def setUpClass(cls):
        cls.build = harness.Scratch("unwind-callers")
        cls.exe = harness.compile_program(cls.build, source("unwind_callers.cc"))
        with open(source("unwind_callers.cc")) as f:
            cls.marks = harness.marked_sites(f.read())

    @classmethod
    def tearDownClass(cls):
        cls.build.cleanup()

    def sites(self, opts=""):
        r, raws = harness.run_program(self.scratch, self.exe,
                                      env={"MEMPROF_OPTIONS": opts})
        self.assertEqual(len(raws), 1)
        return harness.llvm_show_raw(raws[0], self.exe)

    def expected_stack(self, name):
        (func, off), (main, main_off) = self.marks[name], self.marks["main_" + name]
        return [(func, off), (main, main_off)]

    def stacks_from(self, sites, func):
        """The distinct stacks (function, line offset) of the sites that
        reach `func` anywhere."""
        out = set()
        for s in sites:
            frames = [(f[0], f[1]) for f in s["stack"]]
            if any(f[0] == func for f in frames):
                out.add(tuple(frames))
        return out

    def test_library_frames_lead_to_their_caller(self):
        sites = self.sites()
        for name in ("fopen", "strdup", "getline", "append"):
            with self.subTest(call=name):
                func = self.marks[name][0]
                self.assertEqual(self.stacks_from(sites, func),
                                 {tuple(self.expected_stack(name))})

    def test_frame_pointers_alone_skip_the_caller(self):
        """unwind_tables=0: the old walk.  The library's allocations lose
        their caller (so the test above fails without tables); strdup,
        the runtime's own entry point, keeps it."""
        sites = self.sites("unwind_tables=0")
        for name in ("fopen", "getline", "append"):
            with self.subTest(call=name):
                self.assertEqual(self.stacks_from(sites, self.marks[name][0]), set())
        self.assertEqual(self.stacks_from(sites, "DupString"),
                         {tuple(self.expected_stack("strdup"))})


def parse_truth(text):
    """{section: (backtrace PCs, our PCs + 1)} and main's address."""
    out, cur, main = {}, None, None
    for line in text.splitlines():
        m = re.match(r"== (\w+)$", line)
        if m:
            cur = out.setdefault(m.group(1), ([], []))
            continue
        m = re.match(r"main (0x[0-9a-f]+)$", line)
        if m:
            main = int(m.group(1), 16)
            continue
        m = re.match(r"bt (0x[0-9a-f]+)$", line)
        if m:
            cur[0].append(int(m.group(1), 16))
            continue
        m = re.match(r"\s+#\d+ (0x[0-9a-f]+)$", line)
        if m:
            cur[1].append(int(m.group(1), 16) + 1)
    return out, main


def symbol_range(exe, name):
    """[start, end) of a function of exe's symbol table."""
    r = harness.run(["nm", "-S", exe])
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == name:
            start, size = int(parts[0], 16), int(parts[1], 16)
            return start, start + size
    raise AssertionError(f"{name} not in {exe}")


class GroundTruth(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.build = harness.Scratch("unwind-truth")
        cls.exe = harness.compile_program(cls.build, source("unwind_truth.cc"),
                                          ldflags=["-lpthread"])

    @classmethod
    def tearDownClass(cls):
        cls.build.cleanup()

    def run_truth(self, opts):
        r, _ = harness.run_program(self.scratch, self.exe, env={
            "MEMPROF_OPTIONS": opts + ":dump_at_exit=0"})
        return parse_truth(r.stderr.decode())

    def test_equal_to_libgcc_unwinder(self):
        # unwind_tables=2: every frame without a frame pointer, the callbacks
        # through qsort and call_once included
        got, main = self.run_truth("malloc_context_size=100:unwind_tables=2")
        self.assertEqual(set(got), {"qsort", "call_once", "thread"})
        for name in ("qsort", "call_once"):
            with self.subTest(callback=name):
                bt, ours = got[name]
                # first frames: the calls of backtrace and of the runtime
                self.assertGreater(len(bt), 8)
                self.assertEqual(ours[1:], bt[1:])
        # libgcc ends the thread's stack with the runtime's thread
        # trampoline, which has no unwind tables; the runtime never
        # records its own frames.
        bt, ours = got["thread"]
        self.assertEqual(ours[1:], bt[1:-1])
        lo, hi = symbol_range(self.exe, "thread_trampoline")
        bias = main - symbol_range(self.exe, "main")[0]
        self.assertTrue(lo <= bt[-1] - bias < hi, hex(bt[-1] - bias))

    def test_frame_pointers_alone_differ(self):
        got, _ = self.run_truth("malloc_context_size=100:unwind_tables=0")
        bt, ours = got["qsort"]
        self.assertNotEqual(ours[1:], bt[1:])

    def test_default_follows_frame_pointers_past_the_program(self):
        # unwind_tables=1 (the default): the tables serve only the library
        # frames below the program's first frame; the comparator is the
        # program's, so from there the walk is the frame-pointer walk
        fp, fp_main = self.run_truth("malloc_context_size=100:unwind_tables=0")
        got, main = self.run_truth("malloc_context_size=100")
        full, _ = self.run_truth("malloc_context_size=100:unwind_tables=2")
        # the same frames (addresses move between runs: compared by count)
        self.assertEqual(len(got["qsort"][1]), len(fp["qsort"][1]))
        self.assertLess(len(got["qsort"][1]), len(full["qsort"][1]))

    def test_context_size_bounds_the_walk(self):
        for size in (1, 2, 5):
            with self.subTest(malloc_context_size=size):
                got, _ = self.run_truth(f"malloc_context_size={size}:unwind_tables=2")
                bt, ours = got["qsort"]
                self.assertEqual(len(ours), size)
                self.assertEqual(ours[1:], bt[1:size])


# rt_unwind.h's enumerations
FP, SP, RBP, STOP = range(4)
SAME, SAVED, UNDEF = range(3)


def readelf_tables(lib):
    """The FDEs of lib as `readelf -wF` interprets them: a list of
    (start, end, rows) with rows [(address, {column: rule})]; an FDE
    without rows of its own gets its CIE's initial row."""
    text = harness.run(["readelf", "-wNF", lib]).stdout  # N: not the debug file
    cies, fdes, cur, cols = {}, [], None, None
    for line in text.splitlines():
        m = re.match(r"([0-9a-f]{8}) [0-9a-f]+ ([0-9a-f]{8}) (CIE|FDE)"
                     r"(?: cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+))?", line)
        if m:
            cur, cols = [], None
            if m.group(3) == "CIE":
                cies[int(m.group(1), 16)] = cur
            else:
                fdes.append((int(m.group(5), 16), int(m.group(6), 16),
                             int(m.group(4), 16), cur))
            continue
        if line.split()[:2] == ["LOC", "CFA"]:
            cols = line.split()[1:]
            continue
        m = re.match(r"([0-9a-f]{16}) (.*)$", line)
        if m and cols is not None:
            # "r3 (rbx)": saved in another register, one column
            vals = re.sub(r"(r\d+) \((\w+)\)", r"\1(\2)", m.group(2)).split()
            cur.append((int(m.group(1), 16), dict(zip(cols, vals))))
    out = []
    for start, end, cie, rows in fdes:
        if start < end:
            rows = rows or [(start, cies[cie][0][1])]
            out.append((start, end, rows))
    return out


def expected_rules(row):
    """The rules the runtime may give for a readelf row: (kind, cfa_off,
    {rbp rules}, rbp_off, ra_off); None fields are not compared."""
    cfa, ra, rbp = row["CFA"], row.get("ra", "u"), row.get("rbp", "u")
    if ra == "u":
        return STOP, None, None, None, None
    m = re.fullmatch(r"(rsp|rbp)\+(\d+)", cfa)
    mra = re.fullmatch(r"c([+-]\d+)", ra)
    if not m or not mra:
        return FP, None, None, None, None  # what the walk cannot follow
    kind, off, ra_off = SP if m.group(1) == "rsp" else RBP, int(m.group(2)), int(mra.group(1))
    msave = re.fullmatch(r"c([+-]\d+)", rbp)
    if kind == RBP and off == 16 and rbp == "c-16" and ra_off == -8:
        return FP, None, None, None, None
    if msave:
        return kind, off, {SAVED}, int(msave.group(1)), ra_off
    # readelf's "u" is both "no rule yet" (same value) and "undefined"
    how = {SAME, UNDEF} if rbp == "u" else {SAME} if rbp == "s" else {UNDEF}
    return kind, off, how, None, ra_off


def build_rbp_lib(scratch):
    """unwind_rbp_lib.S as a library in scratch."""
    lib = scratch.path("librbpframe.so")
    harness.run(["clang-22", "-shared", source("unwind_rbp_lib.S"), "-o", lib])
    return lib


class TableReader(harness.ProfTest):
    """The runtime's CFI reader against readelf's interpretation of every
    row of every FDE of the system's libraries and of unwind_rbp_lib.S
    (first and last address of each row)."""
    LIBS = ["libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
            "ld-linux-x86-64.so.2"]

    def test_every_row_of_system_libraries(self):
        driver = self.scratch.path("driver")
        harness.run(["clang-22", "-O1", "-I", harness.ROOT, "-I", os.path.join(harness.ROOT, "runtime", "record"),
                     source("unwind_cfi_driver.c"),
                     os.path.join(harness.ROOT, "runtime", "record", "rt_cfi.c"), "-o", driver, "-ldl"])
        seen = set()
        libs = [os.path.join("/lib/x86_64-linux-gnu", lib) for lib in self.LIBS]
        for path in libs + [build_rbp_lib(self.scratch)]:
            with self.subTest(lib=os.path.basename(path)):
                queries, wants = [], []
                for start, end, rows in readelf_tables(path):
                    for i, (loc, row) in enumerate(rows):
                        last = (rows[i + 1][0] if i + 1 < len(rows) else end) - 1
                        for a in sorted({loc, last}):
                            queries.append(a)
                            wants.append(expected_rules(row))
                r = subprocess.run([driver, path], input="".join(f"{a:x}\n" for a in queries),
                                   stdout=subprocess.PIPE, text=True, check=True)
                got = [tuple(map(int, line.split())) for line in r.stdout.splitlines()]
                self.assertEqual(len(got), len(queries))
                bad = []
                for a, want, (kind, cfa_off, rbp, rbp_off, ra_off) in zip(queries, wants, got):
                    seen.add(kind)
                    ok = kind == want[0] and (want[1] is None or (
                        cfa_off == want[1] and rbp in want[2] and ra_off == want[4] and
                        (want[3] is None or rbp_off == want[3])))
                    if not ok:
                        bad.append((hex(a), want, (kind, cfa_off, rbp, rbp_off, ra_off)))
                self.assertGreater(len(queries), 100 if path in libs else 5)
                self.assertEqual(bad[:5], [], f"{len(bad)} of {len(queries)} rows differ")
        self.assertEqual(seen, {FP, SP, RBP, STOP})


class RbpFrame(harness.ProfTest):
    """A frame whose CFA is %rbp-based but not a frame-pointer record: the
    word above its saved %rbp is 0x1234, which the frame-pointer walk
    takes for a return address."""

    def sites(self, opts):
        lib = build_rbp_lib(self.scratch)
        exe = harness.compile_program(self.scratch, source("unwind_rbp.c"), ldflags=[
            lib, f"-Wl,-rpath,{self.scratch.dir}"])
        _, raws = harness.run_program(self.scratch, exe, env={"MEMPROF_OPTIONS": opts})
        return harness.llvm_show_raw(raws[0], exe), harness.read_raw(raws[0])[0]

    def test_unwound_by_its_rule(self):
        with open(source("unwind_rbp.c")) as f:
            marks = harness.marked_sites(f.read())
        sites, _ = self.sites("")
        stacks = {s["mib"]["TotalSize"]: [(f[0], f[1]) for f in s["stack"]] for s in sites}
        self.assertEqual(stacks.get(48), [marks["rbp_frame"], marks["main_rbp_frame"]])

    def test_frame_pointers_alone_take_rbx(self):
        _, raw = self.sites("unwind_tables=0")
        stacks = [raw["stacks"][i] for i, m in raw["mibs"].items() if m["TotalSize"] == 48]
        self.assertEqual(len(stacks), 1)
        self.assertEqual(stacks[0][1], 0x1234 - 1)  # written as PC - 1


class UnloadedModule(harness.ProfTest):
    def test_rules_do_not_outlive_their_library(self):
        libs = []
        for frame in (8, 24):
            lib = self.scratch.path(f"libframe{frame}.so")
            harness.run(["clang-22", "-shared", f"-DFRAME={frame}",
                         source("unwind_frame_lib.S"), "-o", lib])
            libs.append(lib)
        exe = harness.compile_program(self.scratch, source("unwind_dlclose.c"),
                                      ldflags=["-ldl"])
        r, raws = harness.run_program(self.scratch, exe, args=libs)
        if r.stdout.decode().strip() != "1":
            self.skipTest("the second library was not loaded at the first one's address")
        with open(source("unwind_dlclose.c")) as f:
            marks = harness.marked_sites(f.read())
        sites = harness.llvm_show_raw(raws[0], exe)
        stacks = {s["mib"]["TotalSize"]: [(f[0], f[1]) for f in s["stack"]] for s in sites}
        self.assertEqual(stacks.get(1000), [marks["first"], marks["main_first"]])
        self.assertEqual(stacks.get(2000), [marks["second"], marks["main_second"]])


class PreloadedTools(harness.ProfTest):
    """The shared runtime under programs built without frame pointers:
    nothing crashes, every profile reads back, and stacks go deep."""

    def run_preloaded(self, cmd, opts=""):
        env = dict(os.environ, LD_PRELOAD=harness.find_built("libmemprof.so"),
                   MEMPROF_OPTIONS=f"log_path={self.scratch.path('p')}{opts}")
        r = subprocess.run(cmd, cwd=self.scratch.dir, env=env, timeout=300,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace")[-2000:])
        profs = [p for p in os.listdir(self.scratch.dir) if p.startswith("p.")]
        self.assertTrue(profs)
        depth = 0
        for p in profs:
            for prof in harness.read_raw(self.scratch.path(p)):
                depth = max([depth] + [len(s) for s in prof["stacks"].values()])
        return depth

    def test_python(self):
        depth = self.run_preloaded(
            ["/usr/bin/python3", "-c",
             "import json, threading\n"
             "def work(): json.dumps({str(i): list(range(i)) for i in range(300)})\n"
             "ts = [threading.Thread(target=work) for _ in range(4)]\n"
             "[t.start() for t in ts]; [t.join() for t in ts]\n"],
            ":unwind_tables=2")
        self.assertGreaterEqual(depth, 20)

    def test_uninstrumented_program_unwound_by_tables(self):
        """unwind_tables=-1 (the default) is 2 in a program without
        instrumented code: its own frames have no frame pointers either."""
        exe = self.scratch.path("nofp")
        harness.run(["gcc", "-O2", "-fomit-frame-pointer", "-g",
                     harness.prog_path(__file__, "no_frame_pointers.c"), "-o", exe])
        got = {}
        for opts in ("", ":unwind_tables=1", ":unwind_tables=2"):
            for p in os.listdir(self.scratch.dir):
                if p.startswith("p."):
                    os.unlink(self.scratch.path(p))
            self.run_preloaded([exe], opts)
            prof = harness.read_raw(self.scratch.path(
                next(p for p in os.listdir(self.scratch.dir) if p.startswith("p."))))[0]
            m = next(sid for sid, m in prof["mibs"].items() if m["TotalSize"] == 12345)
            got[opts] = len(prof["stacks"][m])
        # leaf, middle, main, libc's start, _start at least; with 1 the walk
        # stops at the program's first frame (leaf: its caller's frame
        # pointer is not one)
        self.assertGreaterEqual(got[""], 5)
        self.assertEqual(got[""], got[":unwind_tables=2"])
        self.assertLessEqual(got[":unwind_tables=1"], 2)

    def test_gcc(self):
        src = self.scratch.write("x.c", "int f(int x) { return x * 2; }\n")
        self.run_preloaded(["gcc", "-O2", "-c", src, "-o", self.scratch.path("x.o")])

    def test_git(self):
        self.run_preloaded(["git", "--version"])


if __name__ == "__main__":
    harness.main()
