#!/usr/bin/env python3
"""bench/bench.py: our MemProf pieces against LLVM's, measured in the same run.

Entry point behind bench/run.sh (see bench/README.md for what each number
means). Section 1 runs real programs and a malloc microbenchmark linked
three ways from the same objects (floor / LLVM runtime / our runtime);
section 2 merges raw profiles of a generated deep-stack program with
llvm-profdata-22 and with memprof-profdata; section 3 (bench_pgo.py) merges
each real program's instrumentation and memory profiles into one file. Runs are interleaved
(floor, llvm, ours, floor, ...) and each figure is a median.
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_lib as B  # noqa: E402
import bench_pgo  # noqa: E402
import bench_programs as P  # noqa: E402
from bench_lib import log, median, fmt, ratio  # noqa: E402

VARIANTS = ["floor", "llvm", "ours"]


def parse_args():
    ap = argparse.ArgumentParser(description="MemProf benchmark: ours vs LLVM")
    ap.add_argument("--quick", action="store_true",
                    help="3 repetitions, smaller workloads, merge sizes 1 and 10")
    ap.add_argument("--only", choices=["runtime", "tool", "pgo"],
                    help="run one section only")
    ap.add_argument("--reps", type=int, help="override repetitions")
    ap.add_argument("--sizes", help="merge sizes, comma separated (e.g. 1,10,50,200)")
    ap.add_argument("--programs", help="runtime section: these programs only, comma "
                    "separated, of " + ",".join(P.KEYS) + " (malloc_pairs is then skipped)")
    return ap.parse_args()


class Config:
    def __init__(self, args):
        self.quick = args.quick
        self.bench_dir = os.path.abspath(os.environ.get(
            "BENCH_DIR", os.path.join(B.ROOT, "build-bench")))
        self.reps = args.reps or (3 if args.quick else 7)
        sizes = args.sizes or ("1,10" if args.quick else "1,10,50,200")
        self.sizes = [int(s) for s in sizes.split(",")]
        self.only = args.only
        self.programs = args.programs.split(",") if args.programs else None
        unknown = set(self.programs or []) - set(P.KEYS)
        if unknown:
            sys.exit(f"bench: unknown program(s) {sorted(unknown)}; known: {P.KEYS}")
        self.obj = os.path.join(self.bench_dir, "obj")
        self.work = os.path.join(self.bench_dir, "work")


# ---- section 1: runtime overhead -----------------------------------------

# Our runtime a second time, in the mode that starts no ticker thread: same
# executable, its option set through the environment (LLVM's runtime reads
# the same variable, so it is set for this variant alone).
EXACT = "exact"
EXACT_LABEL = "ours exact_clock=1"
RUN_VARIANTS = VARIANTS + [EXACT]
RUN_ENV = {EXACT: {"MEMPROF_OPTIONS": "exact_clock=1"}}
OURS_LIKE = ["ours", EXACT]


def run_workload(cfg, w):
    """Interleaved repetitions; per variant: medians and last profile size."""
    exes = dict(w.exes)
    exes[EXACT] = exes["ours"]
    samples = {v: [] for v in RUN_VARIANTS}
    prof = {v: None for v in RUN_VARIANTS}
    cwds = {}
    for v in RUN_VARIANTS:
        if exes[v]:
            cwds[v] = B.fresh_dir(os.path.join(cfg.work, "rt", v))
            for f in w.inputs:
                os.symlink(f, os.path.join(cwds[v], os.path.basename(f)))
    # per repetition: (ours-like added) / (llvm added), wall and CPU
    paired = {v: [] for v in OURS_LIKE}
    log(f"runtime: {w.title}, {cfg.reps} reps")
    for _ in range(cfg.reps):
        rep = {}
        for v in RUN_VARIANTS:
            if not exes[v]:
                continue
            s = B.measure([exes[v], *w.tail], cwd=cwds[v], env=RUN_ENV.get(v),
                          stamp=os.path.join(cwds[v], "exit.stamp"))
            prof[v] = B.clean_profiles(cwds[v]) or prof[v]
            if s.rc == 0:
                samples[v].append(s)
                rep[v] = s
        for v in OURS_LIKE:
            if all(k in rep for k in ("floor", "llvm", v)):
                paired[v].append({k: ratio(getattr(rep[v], k) - getattr(rep["floor"], k),
                                           getattr(rep["llvm"], k) - getattr(rep["floor"], k))
                                  for k in ("wall", "cpu")})
    res = {}
    for v in RUN_VARIANTS:
        ss = samples[v]
        if not ss:
            res[v] = "failed" if exes[v] else None
            continue
        res[v] = dict(wall=median([s.wall for s in ss]), cpu=median([s.cpu for s in ss]),
                      wall_min=min(s.wall for s in ss), cpu_min=min(s.cpu for s in ss),
                      rss=median([s.rss_kb for s in ss]) / 1024.0,
                      lag=median([s.exit_lag for s in ss]), prof=prof[v])
    res["paired"] = {v: {k: median([p[k] for p in paired[v] if p[k] is not None])
                         if paired[v] else None for k in ("wall", "cpu")}
                     for v in OURS_LIKE}
    return res


def val(res, v, key):
    """A median, None (not built) or "failed" (built, every run failed)."""
    return res[v][key] if isinstance(res[v], dict) else res[v]


def added(res, v, key):
    a, f = val(res, v, key), val(res, "floor", key)
    if not isinstance(a, float) or not isinstance(f, float):
        return a if isinstance(a, str) else None
    return a - f


def added_ratio(res, v, key):
    """What variant v adds over the floor, over what LLVM's runtime adds."""
    return ratio(added(res, v, key), added(res, "llvm", key))


def rss_ratio(res, v):
    return ratio(val(res, v, "rss"), val(res, "llvm", "rss"))


def report_workload(title, res):
    rows = []
    # The fastest repetition of each variant as well: on a shared machine the
    # noise only ever adds time, and the medians move with the host's phase.
    for key, label in [("wall", "wall s"), ("cpu", "CPU s (user+sys)"),
                       ("wall_min", "wall s, fastest rep"),
                       ("cpu_min", "CPU s, fastest rep"), ("rss", "peak RSS MiB")]:
        row = [label] + [fmt(val(res, v, key)) for v in RUN_VARIANTS]
        row += [fmt(added(res, v, key)) for v in ["llvm", *OURS_LIKE]]
        row += [fmt(added_ratio(res, v, key)) for v in OURS_LIKE]
        row += [fmt(rss_ratio(res, v)) if key == "rss" else "" for v in OURS_LIKE]
        rows.append(row)
    width = 1 + len(RUN_VARIANTS) + 3 + 2 + 2
    # Each repetition runs the variants back to back, in one phase of the
    # host: the median of the per-repetition ratios is the least moved by
    # phases that last longer than a repetition.
    for key, label in [("wall", "wall, median of per-rep ratios"),
                       ("cpu", "CPU, median of per-rep ratios")]:
        row = [label] + [""] * (len(RUN_VARIANTS) + 3)
        row += [fmt(res["paired"][v][key]) for v in OURS_LIKE]
        rows.append(row + ["", ""])
    rows.append(["exit: main end -> reaped, s"]
                + [fmt(val(res, v, "lag"), "{:.4f}") for v in RUN_VARIANTS]
                + [""] * (width - 1 - len(RUN_VARIANTS)))
    dump = ["exit-time dump est. (exit row - floor's), s", "-"]
    dump += [fmt(added(res, v, "lag"), "{:.4f}") for v in RUN_VARIANTS[1:]]
    dump += ["", "", ""] + [fmt(added_ratio(res, v, "lag")) for v in OURS_LIKE]
    rows.append(dump + ["", ""])
    prof = ["raw profile bytes", "-"] + [fmt(val(res, v, "prof"), "{}")
                                         for v in RUN_VARIANTS[1:]]
    rows.append(prof + [""] * (width - len(prof)))
    hdr = ["metric", "floor", "llvm", "ours", EXACT_LABEL,
           "llvm-floor", "ours-floor", "exact-floor",
           "ours added / llvm added (target <= 0.333)", "exact added / llvm added",
           "ours / llvm (RSS target <= 1)", "exact / llvm (RSS)"]
    return f"### {title}\n\n" + B.table(hdr, rows) + "\n"


def report_summary(results):
    """One row per program: the target ratios side by side."""
    rows = []
    for key, res in results:
        if res is None:
            rows.append([key] + ["build failed"] * 12)
            continue
        row = [key, fmt(val(res, "floor", "wall")), fmt(added(res, "llvm", "wall"))]
        for v in OURS_LIKE:
            row += [fmt(added_ratio(res, v, "wall")), fmt(added_ratio(res, v, "cpu")),
                    fmt(res["paired"][v]["wall"]), fmt(added_ratio(res, v, "wall_min")),
                    fmt(rss_ratio(res, v))]
        rows.append(row)
    hdr = ["program", "floor wall s", "llvm adds, wall s",
           "ours/llvm added: wall (<= 0.333)", "CPU", "wall, per-rep", "wall, fastest",
           "RSS ours/llvm (<= 1)",
           "exact_clock=1: wall", "CPU", "wall, per-rep", "wall, fastest", "RSS"]
    return ("### Summary: what our runtime adds over the floor, as a share of what "
            "LLVM's adds (medians unless said)\n\n" + B.table(hdr, rows) + "\n")


def build_malloc_pairs(cfg, bench_objs, lib_ours):
    o = B.compile_obj(os.path.join(B.BENCH_SRC, "malloc_pairs.c"),
                      os.path.join(cfg.obj, "malloc_pairs.o"), B.CC,
                      ["-O2", *B.PROFILE_FLAGS, "-pthread"])
    return B.link_variants([o], os.path.join(cfg.obj, "malloc_pairs"),
                           bench_objs, lib_ours, cxx=False)


def run_malloc_pairs(cfg, exes):
    total = 400000 if cfg.quick else 2000000
    rows = []
    for threads in [1, 2, 8]:
        rates = {v: [] for v in VARIANTS}
        log(f"malloc_pairs: {threads} threads")
        for _ in range(cfg.reps):
            for v in VARIANTS:
                if not exes[v]:
                    continue
                cwd = B.fresh_dir(os.path.join(cfg.work, "mp", v))
                r = subprocess.run([exes[v], str(threads), str(total // threads)],
                                   cwd=cwd, stdout=subprocess.PIPE, text=True)
                if r.returncode == 0 and "pairs_per_sec=" in r.stdout:
                    rates[v].append(float(r.stdout.split("=")[1]))
        m = {v: median(rates[v]) for v in VARIANTS}
        rows.append([str(threads)] + [fmt(m[v] / 1e6 if m[v] else None) for v in VARIANTS]
                    + [fmt(ratio(m["ours"], m["llvm"]), "{:.2f}")])
    hdr = ["threads", "floor M pairs/s", "llvm M pairs/s", "ours M pairs/s",
           "ours / llvm (higher is better)"]
    return (f"### malloc_pairs ({total} malloc/free pairs per run, split over the threads)\n\n"
            + B.table(hdr, rows) + "\n")


def section_runtime(cfg, lib_ours):
    parts = ["## 1. Runtime overhead\n"]
    if not lib_ours:
        parts.append("Our runtime: not built (ours columns say so).\n")
    results = []
    for key, w in P.built_workloads(cfg, lib_ours, cfg.programs):
        if w is None:
            results.append((key, None))
            continue
        res = run_workload(cfg, w)
        results.append((key, res))
        parts.append(report_workload(w.title, res))
        print(parts[-1], flush=True)
    parts.append(report_summary(results))
    print(parts[-1], flush=True)
    if cfg.programs is None:
        mp = build_malloc_pairs(cfg, P.bench_objs(cfg), lib_ours)
        parts.append(run_malloc_pairs(cfg, mp))
        print(parts[-1], flush=True)
    return "\n".join(parts)


# ---- section 2: profile tool ---------------------------------------------

def make_raws(cfg, count):
    """count raw profiles of the deep program (LLVM runtime), one per seed."""
    exe = B.link_variants(P.build_deep(cfg), os.path.join(cfg.obj, "deep"),
                          P.bench_objs(cfg), None)["llvm"]
    raw_dir = os.path.join(cfg.bench_dir, "raws")
    os.makedirs(raw_dir, exist_ok=True)
    raws = []
    for seed in range(count):
        path = os.path.join(raw_dir, f"deep.{seed}.profraw")
        if B.stale(path, [exe]):
            if seed % 25 == 0:
                log(f"raw profiles {seed}/{count}")
            tmp = B.fresh_dir(os.path.join(cfg.work, "rawgen"))
            subprocess.run([exe, str(seed)], cwd=tmp, stdout=subprocess.DEVNULL, check=True)
            got = [f for f in os.listdir(tmp) if f.startswith("memprof.profraw")]
            os.rename(os.path.join(tmp, got[0]), path)
        raws.append(path)
    return exe, raws


def count_contexts(prof):
    """Contexts kept in an indexed profile, as LLVM reads it."""
    # Streamed: the text is large, and the summary line comes first.
    p = subprocess.Popen([B.LLVM_PROFDATA, "show", "--memory", prof],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    callstacks, total = 0, None
    for line in p.stdout:
        if "Total contexts:" in line:
            total = int(line.split(":")[1])
            break
        callstacks += "- Callstack:" in line
    p.kill()
    p.wait()
    if total is None and p.returncode not in (0, -9):
        return "unreadable by llvm-profdata-22"
    return total if total is not None else callstacks


def per_ctx(size, ctx):
    if not isinstance(size, int) or not isinstance(ctx, int) or ctx == 0:
        return None
    return size / ctx


def merge_cmd(tool, raws, exe, out):
    if tool == "llvm":
        return [B.LLVM_PROFDATA, "merge", *raws, f"--profiled-binary={exe}", "-o", out]
    return [tool, "merge", *raws, f"--profiled-binary={exe}", "-o", out]


def tool_works(tool, exe, raw, work):
    """Our tool counts as built once it merges one raw profile."""
    if not tool:
        return None
    out = os.path.join(work, "smoke.memprof")
    r = subprocess.run(merge_cmd(tool, [raw], exe, out), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        log(f"{tool}: merge does not work yet ({r.stderr.strip()[:200]})")
        return None
    return tool


def section_tool(cfg, tool_ours):
    exe, raws = make_raws(cfg, max(cfg.sizes))
    tool_ours = tool_works(tool_ours, exe, raws[0], cfg.work)
    rows = []
    per_input = {"llvm": [], "ours": []}
    for n in cfg.sizes:
        log(f"merge: {n} inputs, {cfg.reps} reps")
        inputs = raws[:n]
        tools = {"llvm": "llvm", "ours": tool_ours}
        samples = {"llvm": [], "ours": []}
        outs = {}
        for _ in range(cfg.reps if n < 200 else max(5, cfg.reps - 2)):
            for t in ["llvm", "ours"]:
                if not tools[t]:
                    continue
                out = os.path.join(cfg.work, f"merged.{t}.{n}")
                s = B.measure(merge_cmd(tools[t], inputs, exe, out))
                if s.rc == 0 and os.path.exists(out):
                    samples[t].append(s)
                    outs[t] = out
        m = {}
        for t in ["llvm", "ours"]:
            ss = samples[t]
            if not ss:
                m[t] = None
                continue
            m[t] = dict(wall=median([s.wall for s in ss]),
                        rss=median([s.rss_kb for s in ss]) / 1024.0,
                        size=os.path.getsize(outs[t]), ctx=count_contexts(outs[t]))
            per_input[t].append((n, m[t]["wall"]))
        g = lambda t, k: m[t][k] if m[t] else None  # noqa: E731
        rows.append([str(n), fmt(g("llvm", "wall")), fmt(g("ours", "wall")),
                     fmt(ratio(g("ours", "wall"), g("llvm", "wall"))),
                     fmt(g("llvm", "rss"), "{:.1f}"), fmt(g("ours", "rss"), "{:.1f}"),
                     fmt(ratio(g("ours", "rss"), g("llvm", "rss"))),
                     fmt(g("llvm", "size"), "{}"), fmt(g("ours", "size"), "{}"),
                     fmt(ratio(g("ours", "size"), g("llvm", "size"))),
                     fmt(ratio(per_ctx(g("ours", "size"), g("ours", "ctx")),
                               per_ctx(g("llvm", "size"), g("llvm", "ctx")))),
                     fmt(g("llvm", "ctx"), "{}"), fmt(g("ours", "ctx"), "{}")])
    hdr = ["inputs", "llvm s", "ours s", "time ours/llvm (<= 0.2)",
           "llvm RSS MiB", "ours RSS MiB", "RSS ours/llvm (<= 1)",
           "llvm bytes", "ours bytes", "size ours/llvm (<= 1.1)",
           "bytes per context ours/llvm",
           "llvm contexts", "ours contexts"]
    lin = []
    for t in ["llvm", "ours"]:
        pts = per_input[t]
        lin.append(f"{t}: " + (", ".join(f"{n} -> {w / n * 1000:.1f} ms/input"
                                          for n, w in pts) if pts else B.NOT_BUILT))
    raw_size = os.path.getsize(raws[0])
    text = ("## 2. Profile tool: merge raw profiles of the deep-stack program\n\n"
            f"Each raw profile: {raw_size} bytes (LLVM runtime, one run with its own seed).\n\n"
            + B.table(hdr, rows) + "\n\nTime per input (linearity): "
            + "; ".join(lin) + "\n")
    print(text, flush=True)
    return text


def machine_line():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    return f"{os.cpu_count()} CPUs ({model}), {mem_kb / 1048576:.1f} GiB RAM"


def main():
    args = parse_args()
    cfg = Config(args)
    os.makedirs(cfg.work, exist_ok=True)
    B.init_wrapper(cfg.obj)
    lib_ours, tool_ours = B.build_ours(cfg.bench_dir)
    head = (f"# bench results {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
            f"{' (--quick)' if cfg.quick else ''}\n\nMachine: {machine_line()}; "
            f"load average at start: {os.getloadavg()[0]:.2f}; "
            f"repetitions: {cfg.reps} (interleaved, medians)\n"
            f"Our runtime: {lib_ours or B.NOT_BUILT}; our tool: {tool_ours or B.NOT_BUILT}\n")
    print(head, flush=True)
    parts = [head]
    if cfg.only in (None, "runtime"):
        parts.append(section_runtime(cfg, lib_ours))
    if cfg.only in (None, "tool"):
        parts.append(section_tool(cfg, tool_ours))
    if cfg.only in (None, "pgo"):
        parts.append(bench_pgo.section_pgo(cfg, lib_ours, tool_ours,
                                           P.bench_objs(cfg)))
    out = os.path.join(cfg.bench_dir, "results.md")
    with open(out, "w") as f:
        f.write("\n".join(parts))
    log(f"results written to {out}")


if __name__ == "__main__":
    main()
