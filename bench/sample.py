#!/usr/bin/env python3
"""bench/sample.py: what sampling (MEMPROF_OPTIONS=sample_interval=R) costs in
accuracy and buys in speed.

Not part of the tests nor of bench/run.sh.  Uses bench/run.sh's programs
(built the same way, bench_programs.py) and one more real program: the
sqlite3 shell built without -fmemory-profile (-O2 -g, frame pointers) from
the amalgamation bench/run.sh makes, running bench/sample_shell.sql with
libmemprof.so preloaded.

Accuracy: each program runs once with every allocation recorded and RUNS
times (seeds 1..RUNS) at each R; `memprof-profdata report` gives every
context (its symbolized stack), its bytes, allocations and clang-22 verdict
(with --memprof-ave-lifetime-cold-threshold=1, as bench/hotcold.py: no
context of a run of seconds is cold under the default 200 s).  For each
context holding at least 1% of the exact profile's bytes: the relative
error of TotalSize and AllocCount (a context no sampled run saw counts as
-100%), median and worst over contexts and runs, and in how many (context,
run) pairs the verdict differs from the exact one.

Speed: wall and CPU time of the do-nothing runtime (bench/floor_rt.c: the
instrumentation's shadow increments, glibc malloc), ours recording every
allocation and ours at R = 512 KiB (unrecorded blocks from glibc's malloc,
then from our heap: unsampled_to_libc=0), interleaved, medians; the time
ours adds over the floor as a share of the floor's own time.  malloc_pairs
(M malloc/free pairs per second at 1, 2 and 8 threads) for glibc (the
floor), ours exact and ours at 512 KiB under both settings.  --paired runs
the floor and each variant of ours at the same time instead, one per CPU,
swapping CPUs between repetitions, and gives the median of their CPU time
ratios: on a shared machine whose neighbours come and go, far steadier
than runs one after the other (malloc_pairs is then left out).

Usage: bench/sample.py [--quick] [--runs N] [--reps N] [--only accuracy|speed] [--paired]
Environment: BENCH_DIR (default build-bench/), MEMPROF_BUILD_DIR (an
existing build of this tree; else built in BENCH_DIR/tree).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_lib as B  # noqa: E402
import bench_programs as P  # noqa: E402
from bench import machine_line  # noqa: E402
from bench_lib import fmt, log, median  # noqa: E402

INTERVALS = [64 << 10, 512 << 10, 4 << 20]
SPEED_R = 512 << 10
MIN_SHARE = 0.01
REPORT_FLAGS = ["--top", "1000000", "--memprof-ave-lifetime-cold-threshold=1"]
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
# "     1    25.00 MiB  34.9%        400  64.00 KiB  0.0525 ms  120  3276800  notcold"
# a row: #, bytes, [95% range of a sampled profile], %, allocs, ..., verdict
CTX_RE = re.compile(r"^\s+\d+\s+([\d.]+) (B|KiB|MiB|GiB|TiB)(?:\s+\+-[\d>]+%)?\s+[\d.]+%\s+(\d+)\s.*?\s(\S+)"
                    r"(?: \((?:ambiguous call|call not matched)\))?$")


class Config:
    def __init__(self, a):
        self.quick = a.quick  # bench/run.sh's smaller workloads
        self.runs = a.runs or (4 if a.quick else 10)
        self.reps = a.reps or (3 if a.quick else 7)
        self.only = a.only
        self.bench_dir = os.path.abspath(os.environ.get(
            "BENCH_DIR", os.path.join(B.ROOT, "build-bench")))
        self.obj = os.path.join(self.bench_dir, "obj")
        self.work = os.path.join(self.bench_dir, "work", "sample")


def parse_report(text):
    """{stack text: (bytes, allocs, verdict)} of a text report."""
    out, cur, stack = {}, None, []

    def flush():
        if cur:
            out["\n".join(stack)] = cur

    for line in text.splitlines():
        m = CTX_RE.match(line)
        if m:
            flush()
            cur = (float(m.group(1)) * UNITS[m.group(2)], int(m.group(3)), m.group(4))
            stack = []
        elif cur and line.startswith("      "):
            stack.append(" ".join(line.split()))
        elif cur and not line.strip():
            flush()
            cur = None
    flush()
    return out


class Program:
    """One profiled program: its command, environment and binary."""

    def __init__(self, key, argv, binary, inputs=(), env=None):
        self.key, self.argv, self.binary = key, argv, binary
        self.inputs, self.env = inputs, env or {}

    def profile(self, cfg, tool, options):
        cwd = B.fresh_dir(os.path.join(cfg.work, self.key))
        for f in self.inputs:
            os.symlink(f, os.path.join(cwd, os.path.basename(f)))
        env = dict(os.environ, **self.env)
        if options:
            env["MEMPROF_OPTIONS"] = options
        subprocess.run(self.argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        raws = sorted(os.path.join(cwd, f) for f in os.listdir(cwd)
                      if f.startswith("memprof.profraw"))
        if not raws:
            raise RuntimeError(f"{self.key}: no profile ({options})")
        r = subprocess.run([tool, "report", *raws, f"--profiled-binary={self.binary}",
                            *REPORT_FLAGS], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        return parse_report(r.stdout)


def accuracy(cfg, prog, tool):
    exact = prog.profile(cfg, tool, None)
    total = sum(b for b, _, _ in exact.values())
    big = {k: v for k, v in exact.items() if v[0] >= MIN_SHARE * total}
    ctx_mib = median([b for b, _, _ in big.values()]) / (1 << 20) if big else 0
    rows = []
    if not big:
        log(f"accuracy: {prog.key}: no context in the exact profile")
        return rows
    for r in INTERVALS:
        size_err, count_err, differ = [], [], 0
        log(f"accuracy: {prog.key} R={r}: {cfg.runs} runs, {len(big)} contexts >= 1%")
        for seed in range(1, cfg.runs + 1):
            got = prog.profile(cfg, tool, f"sample_interval={r}:sample_seed={seed}")
            for k, (b, n, v) in big.items():
                gb, gn, gv = got.get(k, (0, 0, None))
                size_err.append(abs(gb - b) / b)
                count_err.append(abs(gn - n) / n)
                differ += gv != v
        unknown = all(v == "?" for _, _, v in big.values())
        rows.append([prog.key, human(r), str(len(big)), f"{ctx_mib:.1f}",
                     pct(median(size_err)), pct(max(size_err)),
                     pct(median(count_err)), pct(max(count_err)),
                     "n/a (no access counts)" if unknown
                     else f"{differ} of {len(big) * cfg.runs}"])
    return rows


def human(r):
    return f"{r >> 20} MiB" if r >= 1 << 20 else f"{r >> 10} KiB"


def pct(x):
    return f"{100 * x:.1f}%" if x is not None else "-"


def bench_programs(cfg, lib, keys):
    works = [w for _, w in P.built_workloads(cfg, lib, keys) if w]
    return works, P.bench_objs(cfg)


def shell_program(cfg, so):
    amal = os.path.join(cfg.bench_dir, "sqlite-amal")
    exe = os.path.join(cfg.obj, "sqlite3-shell")
    srcs = [os.path.join(amal, "shell.c"), os.path.join(amal, "sqlite3.c")]
    if B.stale(exe, srcs):
        log("building the sqlite3 shell (uninstrumented)")
        B.run([B.CC, "-O2", "-g", "-fno-omit-frame-pointer", "-I" + amal,
               "-DSQLITE_OMIT_LOAD_EXTENSION", *srcs, "-o", exe, "-lpthread", "-lm"])
    script = os.path.join(B.BENCH_SRC, "sample_shell.sql")
    return Program("sqlite3 shell (preloaded)", [exe, ":memory:", ".read sample_shell.sql"],
                   exe, inputs=[script], env={"LD_PRELOAD": so})


def speed(cfg, works):
    variants = [("floor", "floor", None), ("exact", "ours", None),
                ("sampled", "ours", f"sample_interval={SPEED_R}"),
                ("own", "ours", f"sample_interval={SPEED_R}:unsampled_to_libc=0")]
    rows = []
    for w in works:
        samples = {v: [] for v, _, _ in variants}
        cwd = B.fresh_dir(os.path.join(cfg.work, "speed"))
        for f in w.inputs:
            os.symlink(f, os.path.join(cwd, os.path.basename(f)))
        log(f"speed: {w.title}, {cfg.reps} reps")
        for _ in range(cfg.reps):
            for v, exe, opts in variants:
                s = B.measure([w.exes[exe], *w.tail], cwd=cwd,
                              env={"MEMPROF_OPTIONS": opts} if opts else None)
                B.clean_profiles(cwd)
                if s.rc == 0:
                    samples[v].append(s)
        P.cleanup(cfg)
        m = {v: (median([s.wall for s in ss]), median([s.cpu for s in ss]))
             for v, ss in samples.items() if ss}
        f = m["floor"]
        rows.append([w.key, fmt(f[0]), fmt(m["exact"][0]), fmt(m["sampled"][0]),
                     fmt(m["own"][0]),
                     pct((m["exact"][0] - f[0]) / f[0]), pct((m["sampled"][0] - f[0]) / f[0]),
                     pct((m["sampled"][1] - f[1]) / f[1]), pct((m["own"][1] - f[1]) / f[1])])
    hdr = ["program", "floor s", "exact s", "R=512K s", "R=512K own heap s",
           "exact added (wall)", "R=512K added (wall)", "R=512K added (CPU)",
           "own heap added (CPU)"]
    return B.table(hdr, rows)


def speed_paired(cfg, works):
    # (name, executable, options); LLVM's runtime records every allocation
    variants = [("llvm", "llvm", None), ("exact", "ours", None),
                ("sampled", "ours", f"sample_interval={SPEED_R}"),
                ("own", "ours", f"sample_interval={SPEED_R}:unsampled_to_libc=0")]
    rows = []
    for w in works:
        cwds = [B.fresh_dir(os.path.join(cfg.work, f"pair{k}")) for k in (0, 1)]
        for cwd in cwds:
            for f in w.inputs:
                os.symlink(f, os.path.join(cwd, os.path.basename(f)))
        # the two runs at once keep apart what they write (leveldb's database)
        db = P.db_dir(cfg)
        tail_b = [a.replace(db, db + ".pair") for a in w.tail]
        log(f"speed (paired): {w.title}, {cfg.reps} reps")
        ratios = {v: [] for v, _, _ in variants}
        for rep in range(cfg.reps):
            for v, exe, opts in variants:
                if not w.exes.get(exe):
                    continue
                floor = ([w.exes["floor"], *w.tail], cwds[0], None)
                ours = ([w.exes[exe], *tail_b], cwds[1],
                        {"MEMPROF_OPTIONS": opts} if opts else None)
                r = B.pair_ratio(rep, floor, ours)
                for cwd in cwds:
                    B.clean_profiles(cwd)
                if r:
                    ratios[v].append(r)
        P.cleanup(cfg)
        shutil.rmtree(db + ".pair", ignore_errors=True)
        rows.append([w.key] + [pct(median(ratios[v]) - 1) if ratios[v] else "-"
                               for v, _, _ in variants])
    return B.table(["program", "LLVM's runtime added (CPU)", "ours exact added (CPU)",
                    "R=512K added (CPU)", "R=512K own heap added (CPU)"], rows)


def malloc_pairs(cfg, bench_objs, lib):
    o = B.compile_obj(os.path.join(B.BENCH_SRC, "malloc_pairs.c"),
                      os.path.join(cfg.obj, "malloc_pairs.o"), B.CC,
                      ["-O2", *B.PROFILE_FLAGS, "-pthread"])
    exes = B.link_variants([o], os.path.join(cfg.obj, "malloc_pairs"), bench_objs, lib,
                           cxx=False)
    total = 2000000
    variants = [("glibc", "floor", None), ("exact", "ours", None),
                ("R=512K", "ours", f"sample_interval={SPEED_R}"),
                ("R=512K own heap", "ours", f"sample_interval={SPEED_R}:unsampled_to_libc=0")]
    rows = []
    for threads in [1, 2, 8]:
        rates = {v: [] for v, _, _ in variants}
        for _ in range(cfg.reps):
            for v, exe, opts in variants:
                cwd = B.fresh_dir(os.path.join(cfg.work, "mp"))
                env = dict(os.environ, **({"MEMPROF_OPTIONS": opts} if opts else {}))
                r = subprocess.run([exes[exe], str(threads), str(total // threads)], cwd=cwd,
                                   env=env, stdout=subprocess.PIPE, text=True)
                if r.returncode == 0 and "pairs_per_sec=" in r.stdout:
                    rates[v].append(float(r.stdout.split("=")[1]))
        m = {v: median(x) / 1e6 for v, x in rates.items()}
        rows.append([str(threads)] + [fmt(m[v], "{:.2f}") for v, _, _ in variants])
    return B.table(["threads"] + [f"{v} M pairs/s" for v, _, _ in variants], rows)


def main():
    ap = argparse.ArgumentParser(description="sampling: accuracy and speed")
    ap.add_argument("--quick", action="store_true",
                    help="run.sh's --quick workloads, 4 runs per R, 3 speed reps")
    ap.add_argument("--runs", type=int, help="sampled runs per program and R (default 10)")
    ap.add_argument("--reps", type=int, help="speed repetitions (default 7)")
    ap.add_argument("--only", choices=["accuracy", "speed"])
    ap.add_argument("--programs", help="comma separated keys (default: all)")
    ap.add_argument("--paired", action="store_true",
                    help="speed: floor and ours at once, one per CPU (median CPU ratios)")
    a = ap.parse_args()
    cfg = Config(a)
    B.init_wrapper(cfg.obj)
    lib, tool = B.build_ours(cfg.bench_dir)
    if not lib or not tool:
        sys.exit("bench: our runtime or tool did not build")
    so = os.path.join(os.path.dirname(lib), "libmemprof.so")
    keys = a.programs.split(",") if a.programs else None
    works, bench_objs = bench_programs(cfg, lib, keys)
    print(f"Machine: {machine_line()}\n", flush=True)
    if a.only != "speed":
        progs = [Program(w.key, [w.exes["ours"], *w.tail], w.exes["ours"], w.inputs)
                 for w in works]
        if not keys or "shell" in keys:
            progs.append(shell_program(cfg, so))
        rows = []
        for p in progs:
            rows += accuracy(cfg, p, tool)
            P.cleanup(cfg)
            for row in rows[-len(INTERVALS):]:
                log("| " + " | ".join(row) + " |")
        print(f"### Accuracy ({cfg.runs} runs per R; contexts with >= 1% of the bytes)\n\n"
              + B.table(["program", "R", "contexts", "MiB/context (median)",
                         "bytes err median", "bytes err worst",
                         "count err median", "count err worst", "verdict differs"], rows),
              flush=True)
    if a.only != "accuracy" and a.paired:
        print("### Speed, paired runs (median CPU ratio - 1)\n\n" + speed_paired(cfg, works),
              flush=True)
    elif a.only != "accuracy":
        print("### Speed (medians)\n\n" + speed(cfg, works), flush=True)
        print("### malloc_pairs (2000000 pairs per run)\n\n"
              + malloc_pairs(cfg, bench_objs, lib), flush=True)


if __name__ == "__main__":
    main()
