#!/usr/bin/env python3
"""bench/timeline.py - what the timeline costs: our runtime on the bench
programs (bench_programs.py) run three ways from the same executable,
interleaved, medians of --reps runs:

  base       MEMPROF_OPTIONS unset
  peak       peak_snapshot=1 (live at the peak and at exit)
  timeline   timeline=1 (that, and a census every 10 ms)

Prints wall and CPU time (medians, and the least CPU time, the figure a
loaded machine disturbs least) and peak RSS added over base (per cent), the
.timeline file's size, its censuses, bytes per census and per second of
run (bytes per census: the census section alone; the peak and exit lists
list every context live then).  Uses bench.py's Config and build folders (BENCH_DIR, default
build-bench/; MEMPROF_BUILD_DIR for an existing build of the runtime).

    bench/timeline.py [--reps 5] [--programs sqlite,lua] [--modes base,peak] [--quick]
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "lib"))

import bench  # noqa: E402
import bench_lib as B  # noqa: E402
import bench_programs as P  # noqa: E402
import timeline_file  # noqa: E402
from bench_lib import log, median  # noqa: E402

MODES = [("base", None), ("peak", "peak_snapshot=1"),
         ("timeline", "timeline=1:timeline_interval_ms=10")]


def run_modes(cfg, w, reps, modes):
    exe = w.exes["ours"]
    cwds = {}
    for m, _ in modes:
        cwds[m] = B.fresh_dir(os.path.join(cfg.work, "tl", m))
        for f in w.inputs:
            os.symlink(f, os.path.join(cwds[m], os.path.basename(f)))
    samples = {m: [] for m, _ in modes}
    tl = {}
    log(f"timeline: {w.title}, {reps} reps")
    for _ in range(reps):
        for m, opts in modes:
            env = {"MEMPROF_OPTIONS": opts} if opts else None
            s = B.measure([exe, *w.tail], cwd=cwds[m], env=env)
            files = glob.glob(os.path.join(cwds[m], "*.timeline"))
            if files:
                with open(files[0], "rb") as f:
                    data = f.read()
                t = timeline_file.decode(data)
                # the census section alone: the file without its censuses
                cs_bytes = len(data) - len(timeline_file.encode(dict(t, census=[])))
                tl[m] = (len(data), len(t["census"]), s.wall, len(t["peak"]["ctx"]),
                         cs_bytes)
            for p in glob.glob(os.path.join(cwds[m], "*")):
                if os.path.isfile(p) and not os.path.islink(p) and (
                        "profraw" in p or p.endswith(".timeline")):
                    os.unlink(p)
            if s.rc == 0:
                samples[m].append(s)
    res = {m: dict(wall=median([s.wall for s in ss]), cpu=median([s.cpu for s in ss]),
                   cpu_min=min(s.cpu for s in ss),
                   rss=median([s.rss_kb for s in ss]) / 1024.0)
           for m, ss in samples.items() if ss}
    return res, tl


def pct(a, b):
    return f"{100.0 * (a - b) / b:+.1f}%" if a is not None and b else "-"


def report(title, res, tl, modes):
    base = res.get("base")
    rows = []
    for m, _ in modes:
        r = res.get(m)
        if not r:
            rows.append([m, "failed", "", "", "", "", "", "", "", "", ""])
            continue
        size, n, wall, npk, cs_bytes = tl.get(m, (None,) * 5)
        rows.append([m, f"{r['wall']:.3f}", pct(r["wall"], base and base["wall"]),
                     f"{r['cpu']:.3f}", pct(r["cpu"], base and base["cpu"]),
                     f"{r['cpu_min']:.3f}", pct(r["cpu_min"], base and base["cpu_min"]),
                     f"{r['rss']:.1f}", pct(r["rss"], base and base["rss"]),
                     "-" if size is None else f"{size} B, {npk} at peak",
                     "-" if not n else f"{n} in {wall:.1f} s: {cs_bytes / n:.0f} B each, "
                     f"file {size / wall:.0f} B/s"])
    return (f"### {title}\n\n" + B.table(
        ["mode", "wall s", "added", "CPU s", "added", "CPU min s", "added", "RSS MiB", "added",
         "timeline file",
         "censuses"], rows) + "\n")


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--programs")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--modes", default=",".join(m for m, _ in MODES),
                    help="of " + ",".join(m for m, _ in MODES))
    a = ap.parse_args()
    modes = [m for m in MODES if m[0] in a.modes.split(",")]
    cfg = bench.Config(argparse.Namespace(quick=a.quick, reps=a.reps, sizes="1",
                                          only="runtime", programs=a.programs))
    os.makedirs(cfg.work, exist_ok=True)
    B.init_wrapper(cfg.obj)
    lib_ours, _ = B.build_ours(cfg.bench_dir)
    if not lib_ours:
        sys.exit("timeline: our runtime is not built")
    out = [f"Machine: {bench.machine_line()}; load average at start: "
           f"{os.getloadavg()[0]:.2f}; {cfg.reps} interleaved repetitions, medians\n"]
    print(out[0], flush=True)
    for key, w in P.built_workloads(cfg, lib_ours, cfg.programs):
        if w is None:
            continue
        res, tl = run_modes(cfg, w, cfg.reps, modes)
        out.append(report(w.title, res, tl, modes))
        print(out[-1], flush=True)
    with open(os.path.join(cfg.bench_dir, "timeline.md"), "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
