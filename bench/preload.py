#!/usr/bin/env python3
"""bench/preload.py: libmemprof.so preloaded into Debian's own programs
(built without -fmemory-profile), against the same programs run plain.

Not part of the tests nor of bench/run.sh.  Four parts:

  rss    peak RSS of `sort` of a generated 20 MB file: plain, with
         libmemprof.so preloaded (recording every allocation; again with
         lazy_shadow=0, the shadow kept from start-up), and under
         Debian's heaptrack (the largest process of its run: the program
         with heaptrack's preload), medians of --reps runs
  speed  CPU time of python3 (PYTHONMALLOC=malloc: a dict of 120,000
         entries round-tripped through JSON, preload_json.py), the sqlite3
         shell (200,000 rows and an index, sample_shell.sql), perl (a hash
         of 200,000 words, preload_words.pl) and jq (a generated 6 MB
         JSON document), preloaded with MEMPROF_OPTIONS=sample_interval=
         524288 (and each --variant's options after it), as ratios to the
         plain run: both run at once, one per CPU, CPUs swapped between
         repetitions, median of the ratios and their quartiles
         (bench_lib.measure_pair); the same for the plain run against
         itself (how far a ratio moves with nothing changed) and for
         Debian's jemalloc preloaded with its profiler at the same
         sampling rate (MALLOC_CONF=prof:true,lg_prof_sample:19) and
         without it.  --alone runs the two of each ratio one after the
         other instead, each with the machine to itself

  exact  recording every allocation (default options) against heaptrack:
         plain, `heaptrack prog` (its recorder preloaded plus its
         interpreter, the command as its users run it; wait4 counts
         both) and ours preloaded (and each --variant's options), one
         after the other, interleaved, --reps times; medians of CPU time
         (user + sys) and peak RSS (heaptrack: its largest process), and
         the ratio "ours added / heaptrack added" = (ours - plain) /
         (heaptrack - plain), of the medians and the median of each
         repetition's own ratio; then the peak of the RSS summed over all
         of a run's processes (heaptrack's interpreter and compressor
         beside the program), heaptrack and ours, medians of 3 runs

  roots  what roots=1 adds to the same programs recording every
         allocation: CPU time preloaded with roots=1 (a census at exit;
         again with roots_peak_step_kb=16384, a census at each new high
         of the live heap by 16 MiB; and each --variant's options after
         roots=1) over the same preloaded without it, run as pairs as in
         speed, medians of the ratios and their quartiles

Usage: bench/preload.py [--only rss|speed|exact|roots] [--reps N] [--programs python3,sqlite3,perl,jq]
                        [--variant OPTS]... [--alone]
Environment: BENCH_DIR (default build-bench/), MEMPROF_BUILD_DIR (a build
of this tree holding libmemprof.so; default build/).
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_lib as B  # noqa: E402
from bench import machine_line  # noqa: E402
from bench_lib import fmt, log, median  # noqa: E402

SAMPLED = "sample_interval=524288"
ROOTS_STEP_KB = 16384
TREE_REPS = 3
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
SORT_MB = 20


def shared_runtime():
    build = os.environ.get("MEMPROF_BUILD_DIR") or os.path.join(B.ROOT, "build")
    so = os.path.join(build, "libmemprof.so")
    if not os.path.exists(so):
        sys.exit(f"{so} is missing: build the tree (or set MEMPROF_BUILD_DIR)")
    return so


def sort_input(work):
    """A deterministic text file of SORT_MB MB: lines of 10 to 60 letters."""
    path = os.path.join(work, f"sort{SORT_MB}.txt")
    if os.path.exists(path):
        return path
    x, size, lines = 12345, 0, []
    while size < SORT_MB << 20:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        n = 10 + (x >> 33) % 51
        line = "".join(chr(97 + (x >> (4 * k)) % 16) for k in range(n % 16 + 1)) * (n // 16 + 1)
        lines.append(line[:n])
        size += n + 1
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def rss(cfg, so):
    data = sort_input(cfg.work)
    variants = [("plain", ["sort", data, "-o", "/dev/null"], None),
                ("preloaded", ["sort", data, "-o", "/dev/null"], {"LD_PRELOAD": so}),
                ("eager", ["sort", data, "-o", "/dev/null"],
                 {"LD_PRELOAD": so, "MEMPROF_OPTIONS": "lazy_shadow=0"}),
                ("heaptrack", ["heaptrack", "-o", os.path.join(cfg.work, "ht"),
                               "sort", data, "-o", "/dev/null"], None)]
    if not shutil.which("heaptrack"):
        log("heaptrack is missing (apt-get install heaptrack): its column says so")
        variants.pop()
    got = {v: [] for v, _, _ in variants}
    log(f"rss: sort of {SORT_MB} MB, {cfg.reps} reps")
    for _ in range(cfg.reps):
        for v, argv, env in variants:
            s = B.measure(argv, cwd=cfg.work, env=env)
            B.clean_profiles(cfg.work)
            for name in os.listdir(cfg.work):
                if name.startswith("ht."):
                    os.unlink(os.path.join(cfg.work, name))
            if s.rc == 0:
                got[v].append(s)
    plain = median([s.rss_kb for s in got["plain"]])
    row = [f"sort {SORT_MB} MB"]
    for v in ["plain", "preloaded", "eager", "heaptrack"]:
        if not got.get(v):
            row.append("-")
            continue
        kb = median([s.rss_kb for s in got[v]])
        row.append(f"{kb:.0f} KB" + ("" if v == "plain" else f" ({kb / plain:.2f}x)"))
    return B.table(["program", "plain peak RSS", "libmemprof.so preloaded",
                    "preloaded, lazy_shadow=0", "heaptrack"], [row])


def programs(cfg):
    """name -> (argv, environment, input files to link into the run folders)."""
    jq_in = os.path.join(cfg.work, "preload-jq.json")
    if not os.path.exists(jq_in):
        B.run([sys.executable, os.path.join(HERE, "gen_json.py"), jq_in, "--items", "4000"])
    src = lambda f: os.path.join(HERE, f)  # noqa: E731
    return {
        "python3": (["/usr/bin/python3", "preload_json.py"], {"PYTHONMALLOC": "malloc"},
                    [src("preload_json.py")]),
        "sqlite3": (["/usr/bin/sqlite3", ":memory:", ".read sample_shell.sql"], {},
                    [src("sample_shell.sql")]),
        "perl": (["/usr/bin/perl", "preload_words.pl"], {}, [src("preload_words.pl")]),
        "jq": (["/usr/bin/jq", "-c", "[.[] | tostring | length] | add", "preload-jq.json"], {},
               [jq_in]),
    }


def ratio_table(cfg, part, base, what, variants):
    """Per program, its CPU time with each variant over its time in the
    base run, the two run as a pair (one after the other with --alone),
    medians of the ratios with their quartiles (spread).  base and each
    variant are environment additions (base None: plain); variants are
    (column header, environment) pairs."""
    rows = []
    progs = programs(cfg)
    for name in cfg.programs:
        argv, env, inputs = progs[name]
        cwds = [B.fresh_dir(os.path.join(cfg.work, f"pair{k}")) for k in (0, 1)]
        for cwd in cwds:
            for f in inputs:
                os.symlink(f, os.path.join(cwd, os.path.basename(f)))
        log(f"{part}: {name}, {cfg.reps} reps")
        base_env = dict(env, **(base or {}))
        ratios = {v: [] for v, _ in variants}
        for rep in range(cfg.reps):
            for v, extra in variants:
                first = (argv, cwds[0], base_env)
                other = (argv, cwds[1], dict(env, **extra))
                r = (B.alone_ratio if cfg.alone else B.pair_ratio)(rep, first, other)
                for cwd in cwds:
                    clean_run_dir(cwd)
                if r:
                    ratios[v].append(r)
        rows.append([name] + [spread(ratios[v]) for v, _ in variants])
    return B.table(["program"] + [f"CPU ratio to {what}, {v}" for v, _ in variants], rows)


def spread(ratios):
    """A cell of ratio_table: the median of the ratios, and their first
    and third quartiles in parentheses."""
    if not ratios:
        return "failed"
    q = B.quartiles(ratios)
    return fmt(median(ratios)) + (f" ({q[0]:.3f}-{q[1]:.3f})" if q else "")


def ours_env(so, opts):
    return {"LD_PRELOAD": so, "MEMPROF_OPTIONS": opts}


def jemalloc_variants():
    """jemalloc's profiler as its users preload it, sampling at the same
    average interval (its default lg_prof_sample:19, 512 KiB) and writing
    its profile at exit as ours does; and jemalloc alone, which tells its
    heap's layout from its profiler's cost.  [] if jemalloc is missing."""
    if not os.path.exists(JEMALLOC):
        log(f"{JEMALLOC} is missing (apt-get install libjemalloc2): no jemalloc columns")
        return []
    return [("jemalloc prof:true,lg_prof_sample:19",
             {"LD_PRELOAD": JEMALLOC,
              "MALLOC_CONF": "prof:true,lg_prof_sample:19,prof_final:true,prof_prefix:jeprof"}),
            ("jemalloc alone", {"LD_PRELOAD": JEMALLOC})]


def speed(cfg, so):
    # plain against itself first: how far a ratio moves with nothing changed
    variants = [("plain again", {}), (SAMPLED, ours_env(so, SAMPLED))]
    variants += [(f"{SAMPLED}:{v}", ours_env(so, f"{SAMPLED}:{v}")) for v in cfg.variants]
    return ratio_table(cfg, "speed", None, "plain", variants + jemalloc_variants())


def roots(cfg, so):
    """What roots=1 adds to a preloaded run recording every allocation: a
    census at exit, and censuses at each new high by ROOTS_STEP_KB."""
    opts = ["roots=1", f"roots=1:roots_peak_step_kb={ROOTS_STEP_KB}"]
    opts += [f"roots=1:{v}" for v in cfg.variants]
    return ratio_table(cfg, "roots", ours_env(so, ""), "preloaded",
                       [(v, ours_env(so, v)) for v in opts])


def exact_variants(cfg, argv, env, so, cwd):
    """(name, argv, env) of exact's variants for one program."""
    ht = ["heaptrack", "-o", os.path.join(cwd, "ht")] + argv
    out = [("plain", argv, env), ("heaptrack", ht, env),
           ("ours", argv, dict(env, LD_PRELOAD=so))]
    for v in cfg.variants:
        out.append((f"ours {v}", argv, dict(env, LD_PRELOAD=so, MEMPROF_OPTIONS=v)))
    return out


def clean_run_dir(cwd):
    B.clean_profiles(cwd)
    for name in os.listdir(cwd):
        if name.startswith(("ht.", "jeprof.")):
            os.unlink(os.path.join(cwd, name))


def exact_one(cfg, name, argv, env, inputs, so):
    """One program's row: medians and ratios of the exact part."""
    cwd = B.fresh_dir(os.path.join(cfg.work, "exact"))
    for f in inputs:
        os.symlink(f, os.path.join(cwd, os.path.basename(f)))
    variants = exact_variants(cfg, argv, env, so, cwd)
    got = {v: [] for v, _, _ in variants}
    log(f"exact: {name}, {cfg.reps} reps")
    for _ in range(cfg.reps):
        for v, a, e in variants:
            s = B.measure(a, cwd=cwd, env=e)
            clean_run_dir(cwd)
            got[v].append(s if s.rc == 0 else None)
    med = {v: median([s.cpu for s in got[v] if s]) if any(got[v]) else None for v in got}
    rss = {v: median([s.rss_kb for s in got[v] if s]) if any(got[v]) else None for v in got}

    def added_ratio(v):
        if None in (med["plain"], med["heaptrack"], med[v]):
            return "failed"
        per_rep = [(o.cpu - p.cpu) / (h.cpu - p.cpu)
                   for p, h, o in zip(got["plain"], got["heaptrack"], got[v])
                   if p and h and o and h.cpu > p.cpu]
        return (f"{fmt((med[v] - med['plain']) / (med['heaptrack'] - med['plain']))}"
                f" ({fmt(median(per_rep)) if per_rep else '-'})")

    row = [name] + [fmt(med[v]) if med[v] is not None else "failed" for v in got]
    row += [added_ratio(v) for v in got if v.startswith("ours")]
    row += [fmt(B.ratio(rss[v], rss["heaptrack"])) for v in got if v.startswith("ours")]
    tree = tree_peaks(cfg, cwd, variants)
    row += [f"{tree[v]} KB" if tree[v] else "failed" for v in ("heaptrack", "ours")]
    row += [fmt(B.ratio(tree["ours"], tree["heaptrack"]))]
    return row, list(got)


def tree_peaks(cfg, cwd, variants):
    """Peak RSS summed over all of a run's processes (heaptrack's
    interpreter and compressor beside the program), medians of
    TREE_REPS runs of heaptrack and of ours, after the timed ones: the
    polling would cost the timed runs CPU."""
    out = {}
    for v, a, e in variants:
        if v in ("heaptrack", "ours"):
            runs = []
            for _ in range(TREE_REPS):
                runs.append(B.tree_peak_rss(a, cwd=cwd, env=e))
                clean_run_dir(cwd)
            ok = [r for r in runs if r]
            out[v] = median(ok) if len(ok) == len(runs) else None
    return out


def exact(cfg, so):
    if not shutil.which("heaptrack"):
        sys.exit("exact needs heaptrack (apt-get install heaptrack)")
    progs = programs(cfg)
    rows, names = [], []
    for name in cfg.programs:
        argv, env, inputs = progs[name]
        row, names = exact_one(cfg, name, argv, env, inputs, so)
        log(" | ".join(row))  # a row as soon as it is known: a python3 rep takes minutes
        rows.append(row)
    ours = [v for v in names if v.startswith("ours")]
    header = (["program"] + [f"{v} CPU s" for v in names]
              + [f"{v} added / heaptrack added (per-rep median)" for v in ours]
              + [f"{v} peak RSS / heaptrack's" for v in ours]
              + ["heaptrack, all processes: peak RSS", "ours, all processes: peak RSS",
                 "ours / heaptrack, all processes"])
    return B.table(header, rows)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["rss", "speed", "exact", "roots"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--programs", default="python3,sqlite3,perl,jq")
    ap.add_argument("--alone", action="store_true",
                    help="speed and roots: run the two of a ratio one after the other, "
                         "each alone, instead of at once on the two CPUs")
    ap.add_argument("--variant", action="append", default=[], dest="variants",
                    help="more options (a column each): after sample_interval in speed, "
                         "alone in exact")
    args = ap.parse_args()
    args.programs = args.programs.split(",")
    bench_dir = os.environ.get("BENCH_DIR") or os.path.join(B.ROOT, "build-bench")
    args.work = os.path.join(bench_dir, "work", "preload")
    os.makedirs(args.work, exist_ok=True)
    B.init_wrapper(os.path.join(bench_dir, "obj"))
    return args


def main():
    cfg = parse_args()
    so = shared_runtime()
    print(f"Machine: {machine_line()}\n")
    if cfg.only in (None, "rss"):
        print(rss(cfg, so) + "\n")
    if cfg.only in (None, "speed"):
        print(speed(cfg, so) + "\n")
    if cfg.only in (None, "exact"):
        print(exact(cfg, so) + "\n")
    if cfg.only in (None, "roots"):
        print(roots(cfg, so))


if __name__ == "__main__":
    main()
