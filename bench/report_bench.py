#!/usr/bin/env python3
"""bench/report_bench.py: speed and size of `memprof-profdata report` on a
large profile (not part of the tests; results in bench/report.md).

The deep-stack C++ program of gen_deep.py with a pool of 60000 contexts is
built with clang++-22 -fmemory-profile and our runtime and run with 24
seeds (20000 allocations each, drawn from the pool: ~60k distinct contexts
over the 24 profiles).  Then, each measured REPS times (median):
  - report --format=text and --format=html of the 24 raw profiles (which
    includes reading, symbolizing and merging them) and of the merged
    indexed file;
  - the sizes of the HTML page, the pprof file and the indexed file;
  - the page in headless Chromium: the time from navigation start to the
    end of the page's script (first paint follows it; the page stamps it
    in <body data-rendered=MS>), and the wall time of a --screenshot run.

Usage: bench/report_bench.py [--reps N] [--work DIR]
MEMPROF_BUILD_DIR: the build to use (default ./build).
"""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_lib as B  # noqa: E402

SEEDS = 24
COUNT = 20000
POOL = 60000


def build(work, build_dir):
    cpp = os.path.join(work, "deep60k.cpp")
    gen = os.path.join(B.BENCH_SRC, "gen_deep.py")
    if B.stale(cpp, [gen]):
        B.run([sys.executable, gen, cpp, "--pool", str(POOL)])
    obj = B.compile_obj(cpp, os.path.join(work, "deep60k.o"), B.CXX,
                        ["-O2", *B.PROFILE_FLAGS])
    exe = os.path.join(work, "deep60k")
    lib = os.path.join(build_dir, "runtime", "libmemprof.a")
    if B.stale(exe, [obj, lib]):
        B.run([B.CXX, obj, "-o", exe, "-Wl,--whole-archive", lib,
               "-Wl,--no-whole-archive", "-lpthread", "-ldl", "-lm"])
    return exe


def raws(work, exe):
    out = []
    for seed in range(SEEDS):
        path = os.path.join(work, f"deep60k.{seed}.profraw")
        if B.stale(path, [exe]):
            run_dir = B.fresh_dir(os.path.join(work, "run"))
            subprocess.run([exe, str(seed), str(COUNT)], cwd=run_dir,
                           stdout=subprocess.DEVNULL, check=True)
            got = [f for f in os.listdir(run_dir) if f.startswith("memprof.profraw")]
            os.rename(os.path.join(run_dir, got[0]), path)
        out.append(path)
    return out


def timed(argv, reps):
    walls, rss = [], []
    for _ in range(reps):
        s = B.measure(argv)
        if s.rc != 0:
            raise RuntimeError(f"{' '.join(argv)[:200]} failed")
        walls.append(s.wall)
        rss.append(s.rss_kb / 1024.0)
    return B.median(walls), B.median(rss)


def chromium(page, reps):
    rendered, shot = [], []
    for _ in range(reps):
        r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                            "--dump-dom", "file://" + page],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        m = re.search(r'data-rendered="(\d+)"', r.stdout)
        rendered.append(int(m.group(1)) / 1000.0 if m else None)
        png = page + ".png"
        t0 = time.monotonic()
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--window-size=1400,1000", "--screenshot=" + png, "file://" + page],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shot.append(time.monotonic() - t0)
    return B.median(rendered), B.median(shot)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                    "memprof-report-bench"))
    args = ap.parse_args()
    build_dir = os.path.abspath(os.environ.get("MEMPROF_BUILD_DIR", os.path.join(B.ROOT, "build")))
    tool = os.path.join(build_dir, "profdata", "memprof-profdata")
    os.makedirs(args.work, exist_ok=True)
    B.init_wrapper(args.work)
    exe = build(args.work, build_dir)
    inputs = raws(args.work, exe)
    w = lambda name: os.path.join(args.work, name)  # noqa: E731
    B.run([tool, "merge", *inputs, f"--profiled-binary={exe}", "-o", w("m.memprofdata")])
    text = B.run([tool, "report", w("m.memprofdata"), "--top=1"])
    contexts = re.search(r"contexts\s+(\d+)", text).group(1)
    rows = []
    for what, src in (("24 raw profiles", [*inputs, f"--profiled-binary={exe}"]),
                      ("the merged indexed file", [w("m.memprofdata")])):
        for fmt in ("text", "html", "pprof"):
            out = w(f"r.{fmt}")
            wall, rss = timed([tool, "report", *src, f"--format={fmt}", "-o", out], args.reps)
            rows.append([f"{fmt} of {what}", f"{wall:.3f} s", f"{rss:.0f} MB",
                         f"{os.path.getsize(out) / 1e6:.2f} MB"])
    rendered, shot = chromium(w("r.html"), max(3, args.reps // 2))
    print(f"deep-stack generated program, pool {POOL}: {SEEDS} raw profiles of "
          f"{COUNT} allocations, {contexts} contexts; indexed file "
          f"{os.path.getsize(w('m.memprofdata')) / 1e6:.2f} MB; median of {args.reps}")
    print(B.table(["report", "wall", "peak RSS", "output"], rows))
    print(f"HTML in headless Chromium: script done {rendered:.2f} s after navigation "
          f"start; --screenshot run {shot:.2f} s wall")


if __name__ == "__main__":
    main()
