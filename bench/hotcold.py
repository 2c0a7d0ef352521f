#!/usr/bin/env python3
"""bench/hotcold.py: what -fmemory-profile-use hints buy with libmemprof-hotcold.

Not part of the tests nor of bench/run.sh.  Each program is profiled with
our runtime (a representative run), the profile merged with our tool, and
the optimized program built from the same sources six ways:

  plain        -O2 without the profile, glibc malloc
  lib          the same objects linked with libmemprof-hotcold
  hints+ours   -fmemory-profile-use -optimize-hot-cold-new, libmemprof-hotcold
  hints+LTO    the same profile and thresholds compiled -flto, linked by
               ld.gold with LLVM's context disambiguation and hot/cold new
               (docs/hotcold.md, "What the compiler needs"), libmemprof-hotcold
  hints, jemalloc ignores   the hints+ours binary, MEMPROF_HOTCOLD_OPTIONS=cold_arena=0
  hints, glibc ignores      the hinted objects, hotcold_ignore.c (libstdc++'s
                            operator new on glibc malloc, hint dropped)

The hinted builds use a cold lifetime threshold for a short run; a build
with clang's default thresholds is made too, and `memprof-profdata check`
summarizes what landed in each (with LTO: what the clones split of the
calls the build without LTO hints ambiguous).

Programs: hotcold_effect.cc (written to show the effect: hot nodes
interleaved with long-lived records written once and never read again,
pointer-chasing passes over the hot nodes, then an idle period), and from
Debian's sources (hotcold_programs.py) jsoncpp's jsontestrunner on
bench/gen_json.py's input and `ninja -n` in bench/gen_ninja.py's tree.
Variants run interleaved, figures are medians.

Usage: bench/hotcold.py [--quick] [--reps N] [--programs effect,jsoncpp,ninja]
                        [--cold-density D] [--no-lto] [--check-only]
--cold-density sets the measured builds' cold access density threshold
(LLVM's 0.05 by default; a short profiling run raises densities as it
shortens lifetimes); --no-lto leaves the LTO build out; --check-only makes
the builds, check and the stats=1 runs without the timed ones.
Environment: BENCH_DIR (default build-bench/ at the top of the tree),
MEMPROF_BUILD_DIR (an existing build of this tree; else built in
BENCH_DIR/tree).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_lib as B  # noqa: E402
from bench_lib import log, median  # noqa: E402
import hotcold_programs as P  # noqa: E402

# A 1-2 s profiling run is never cold under LLVM's default of 200 s.
COLD_LIFETIME_S = 1
# LLVM's default cold access density (accesses per byte per second).
COLD_DENSITY = 0.05
DEFAULT_USE_FLAGS = ["-O2", "-gmlt", "-fdebug-info-for-profiling",
                     "-mllvm", "-optimize-hot-cold-new"]
# docs/hotcold.md, "What the compiler needs": full LTO through ld.gold and
# LLVM 22's LLVMgold.so; the thresholds on the compile command, the
# rewriting to the hot/cold operator new at the link.
LTO_COMPILE_FLAGS = ["-O2", "-flto", "-gmlt", "-fdebug-info-for-profiling"]
LTO_LINK_FLAGS = ["-O2", "-flto", "-fuse-ld=gold",
                  "-Wl,-plugin-opt=-enable-memprof-context-disambiguation",
                  "-Wl,-plugin-opt=-supports-hot-cold-new",
                  "-Wl,-plugin-opt=-optimize-hot-cold-new",
                  "-Wl,-plugin-opt=-optimize-existing-hot-cold-new"]
VARIANTS = [
    ("plain", "plain (glibc)"),
    ("lib", "no profile, libmemprof-hotcold"),
    ("ours", "hints + libmemprof-hotcold"),
    ("ours_lto", "hints + LTO + libmemprof-hotcold"),
    ("ours_off", "hints, jemalloc ignores (cold_arena=0)"),
    ("glibc_ign", "hints, glibc ignores"),
]
IDLE_MS = 1500


class Config:
    def __init__(self, args):
        self.quick = args.quick
        self.reps = 0 if args.check_only else args.reps or (3 if args.quick else 5)
        self.programs = args.programs.split(",")
        # The lowered thresholds of the measured builds, as -mllvm takes them.
        self.density = COLD_DENSITY if args.cold_density is None else args.cold_density
        self.lowered = [f"-memprof-ave-lifetime-cold-threshold={COLD_LIFETIME_S}"]
        if args.cold_density is not None:
            self.lowered.append(
                f"-memprof-lifetime-access-density-cold-threshold={args.cold_density:g}")
        mllvm = [a for t in self.lowered for a in ("-mllvm", t)]
        self.use_flags = DEFAULT_USE_FLAGS + mllvm
        self.lto_use_flags = LTO_COMPILE_FLAGS + mllvm
        self.lto = not args.no_lto
        self.variants = [(v, label) for v, label in VARIANTS
                         if self.lto or v != "ours_lto"]
        self.bench_dir = os.path.abspath(os.environ.get(
            "BENCH_DIR", os.path.join(B.ROOT, "build-bench")))
        self.obj = os.path.join(self.bench_dir, "obj", "hotcold")
        self.work = os.path.join(self.bench_dir, "work", "hotcold")
        # Hot nodes, cold records per hot node, passes.
        self.effect = (100000, 3, 20) if args.quick else (300000, 3, 10)


def build_tree(cfg):
    """(libmemprof.a, memprof-profdata, libmemprof-hotcold.a)."""
    tree = os.environ.get("MEMPROF_BUILD_DIR")
    if not tree:
        tree = os.path.join(cfg.bench_dir, "tree")
        log("building our runtime, tool and libmemprof-hotcold in " + tree)
        B.run(["cmake", "-S", B.ROOT, "-B", tree, "-DCMAKE_BUILD_TYPE=Release",
               "-DMEMPROF_BUILD_TESTS=OFF"])
        B.run(["cmake", "--build", tree, "-j2", "--target", "memprof", "memprof-profdata",
               "memprof_hotcold"])
    paths = (os.path.join(tree, "runtime", "libmemprof.a"),
             os.path.join(tree, "profdata", "memprof-profdata"),
             os.path.join(tree, "hotcold", "libmemprof-hotcold.a"))
    for p in paths:
        if not os.path.exists(p):
            sys.exit(f"bench: {p} missing (is libjemalloc-dev installed?)")
    return paths


def profile(cfg, name, objs, argv, inputs, pieces):
    """Link the instrumented objects with our runtime, run once, merge."""
    lib, tool, _ = pieces
    exe = os.path.join(cfg.obj, name + ".prof")
    B.run([B.CXX, *objs, "-o", exe, "-Wl,--whole-archive", lib, "-Wl,--no-whole-archive",
           "-lpthread", "-ldl", "-lm"])
    cwd = B.fresh_dir(os.path.join(cfg.work, name + "-profile"))
    for f in inputs:
        os.symlink(f, os.path.join(cwd, os.path.basename(f)))
    log(f"{name}: profiling run")
    # log_path: a program may chdir (ninja -C) before its profile is written.
    B.run(["env", f"MEMPROF_OPTIONS=log_path={cwd}/memprof.profraw", exe, *argv], cwd=cwd)
    raws = [os.path.join(cwd, f) for f in os.listdir(cwd) if f.startswith("memprof.profraw")]
    out = os.path.join(cfg.obj, name + ".memprofdata")
    B.run([tool, "merge", *raws, f"--profiled-binary={exe}", "-o", out])
    return out, B.run([tool, "show", "--symbolized", out])


def link_variants(cfg, name, plain_objs, use_objs, lto_objs, pieces):
    """{variant: (exe, env)} from the same sources; lto_objs (bitcode) are
    linked with LTO unless None."""
    hotcold = pieces[2]
    ign = B.compile_obj(os.path.join(B.BENCH_SRC, "hotcold_ignore.c"),
                        os.path.join(cfg.obj, "hotcold_ignore.o"), B.CC, ["-O2"])
    base = os.path.join(cfg.obj, name)
    with_lib = ["-Wl,--whole-archive", hotcold, "-Wl,--no-whole-archive",
                "-lpthread", "-ldl", "-lm"]
    plans = {
        "plain": [*plain_objs],
        "lib": [*plain_objs, *with_lib],
        "ours": [*use_objs, *with_lib],
        "glibc_ign": [*use_objs, ign],
    }
    if lto_objs is not None:
        plans["ours_lto"] = [*LTO_LINK_FLAGS, *lto_objs, *with_lib]
    exes = {}
    for v, args in plans.items():
        exe = f"{base}.{v}"
        if v == "ours_lto":
            log(f"{name}: linking with LTO")
        B.run([B.CXX, *args, "-o", exe])
        exes[v] = exe
    out = {v: (exe, {}) for v, exe in exes.items()}
    out["ours_off"] = (exes["ours"], {"MEMPROF_HOTCOLD_OPTIONS": "cold_arena=0"})
    return out


def hint_stats(exe, argv, cwd):
    """The library's statistics of one run: {class: (allocations, bytes)}
    and (allocations, bytes) the cold arena served."""
    env = dict(os.environ, MEMPROF_HOTCOLD_OPTIONS="stats=1")
    r = subprocess.run([exe, *argv], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    classes = {}
    for m in re.finditer(r"^memprof-hotcold: class=(\w+) allocs=(\d+) bytes=(\d+)",
                         r.stderr, re.M):
        classes[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    served = re.findall(r"^memprof-hotcold: hint=.* cold_arena_allocs=(\d+) "
                        r"cold_arena_bytes=(\d+)", r.stderr, re.M)
    return classes, (sum(int(a) for a, _ in served), sum(int(b) for _, b in served))


def profile_summary(show, density):
    """Contexts of the profile and LLVM's decision for each (cold when the
    average lifetime reaches the threshold and the access density is below
    `density` per byte per second).  `show` lists a context under every function
    of its inlined allocation frames: each is counted once, by its stack."""
    by_stack = {}
    cur = stack = None
    for line in show.splitlines():
        s = line.strip()
        if s == "- Callstack:":
            cur, stack = {}, []
        elif stack is not None and s.startswith("- { Function:"):
            stack.append(s.split("}")[0])
        elif s == "MemInfoBlock:" and stack is not None:
            by_stack[tuple(stack)] = cur
            stack = None
        m = re.match(r"(AllocCount|TotalLifetime|TotalLifetimeAccessDensity|TotalSize):\s+(\d+)$", s)
        if m and cur is not None:
            cur[m.group(1)] = int(m.group(2))
    mibs = list(by_stack.values())
    mibs = [m for m in mibs if m.get("AllocCount")]
    life = [m["TotalLifetime"] / m["AllocCount"] for m in mibs]
    dens = [m["TotalLifetimeAccessDensity"] / m["AllocCount"] / 100 for m in mibs]
    cold = [m for m, li, d in zip(mibs, life, dens)
            if d < density and li >= COLD_LIFETIME_S * 1000]
    long_lived = sum(1 for li in life if li >= COLD_LIFETIME_S * 1000)
    sparse = sum(1 for d in dens if d < density)
    return {"contexts": len(mibs), "cold": len(cold),
            "cold_allocs": sum(m["AllocCount"] for m in cold),
            "allocs": sum(m["AllocCount"] for m in mibs),
            "long_lived": long_lived, "sparse": sparse,
            "max_life_ms": max(life) if life else 0}


def measure_all(cfg, name, variants, argv, inputs, parse_out):
    cwds = {}
    for v, _ in cfg.variants:
        cwds[v] = B.fresh_dir(os.path.join(cfg.work, name, v))
        for f in inputs:
            os.symlink(f, os.path.join(cwds[v], os.path.basename(f)))
    rows = {v: [] for v, _ in cfg.variants}
    log(f"{name}: {cfg.reps} interleaved repetitions of {len(cfg.variants)} builds")
    for _ in range(cfg.reps):
        for v, _ in cfg.variants:
            exe, env = variants[v]
            out_path = os.path.join(cwds[v], "stdout.txt")
            with open(out_path, "w") as out:
                s = B.measure([exe, *argv], cwd=cwds[v], env=env, stdout=out)
            with open(out_path) as f:
                extra = parse_out(f.read()) if parse_out else {}
            if "idle_rss_kb" in extra:  # the effect program sleeps IDLE_MS
                extra["wall_busy"] = s.wall - IDLE_MS / 1000
            rows[v].append((s, extra))
    return rows, cwds


def values(rows, v, key):
    """A measured figure (wall, cpu, rss_kb: the peak) or, as "prog:NAME",
    one the program printed, over the successful repetitions."""
    vals = []
    for s, extra in rows[v]:
        if s.rc != 0:
            continue
        vals.append(extra.get(key[5:]) if key.startswith("prog:") else getattr(s, key))
    return [x for x in vals if x is not None]


def cell(rows, v, key, scale, spec, with_min):
    """Median, and for times the fastest repetition too: on a shared
    machine other load only ever adds time."""
    vals = values(rows, v, key)
    if not vals:
        return "failed"
    text = spec.format(median(vals) * scale)
    if with_min:
        text += " (" + spec.format(min(vals) * scale) + ")"
    return text


def effect_out(text):
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", text)}


def table(cfg, rows_spec, rows):
    if not cfg.reps:
        return "(no timed runs: --check-only)"
    header = ["median (fastest)"] + [label for _, label in cfg.variants]
    lines = []
    for label, key, scale, spec in rows_spec:
        with_min = label.endswith(" s")
        lines.append([label] + [cell(rows, v, key, scale, spec, with_min)
                                for v, _ in cfg.variants])
    return B.table(header, lines)


def effect_section(cfg, pieces):
    src = os.path.join(B.BENCH_SRC, "hotcold_effect.cc")
    n, per, passes = cfg.effect
    prof_o = B.compile_obj(src, os.path.join(cfg.obj, "effect.prof.o"), B.CXX,
                           ["-O2", *B.PROFILE_FLAGS])
    # The profiling run: fewer passes, an idle period long enough for the
    # records to reach the cold lifetime.
    prof, show = profile(cfg, "effect", [prof_o], [str(n // 3), str(per), "5", "1200"], [],
                         pieces)
    plain_o = B.compile_obj(src, os.path.join(cfg.obj, "effect.plain.o"), B.CXX, ["-O2"])
    use_o = os.path.join(cfg.obj, "effect.use.o")
    B.run([B.CXX, "-c", *cfg.use_flags, f"-fmemory-profile-use={prof}", src, "-o", use_o])
    default_o = os.path.join(cfg.obj, "effect.use-default.o")
    B.run([B.CXX, "-c", *DEFAULT_USE_FLAGS, f"-fmemory-profile-use={prof}", src, "-o",
           default_o])
    lto_objs = None
    if cfg.lto:
        lto_objs = [os.path.join(cfg.obj, "effect.use-lto.o")]
        B.run([B.CXX, "-c", *cfg.lto_use_flags, f"-fmemory-profile-use={prof}", src, "-o",
               lto_objs[0]])
    variants = link_variants(cfg, "effect", [plain_o], [use_o], lto_objs, pieces)
    checks = checks_of(cfg, "effect", prof, pieces, [default_o], variants)
    argv = [str(n), str(per), str(passes), str(IDLE_MS)]
    rows, cwds = measure_all(cfg, "effect", variants, argv, [], effect_out)
    per_kib = 1 / 1024
    spec = [
        ("hot passes, CPU s", "prog:hot_s", 1, "{:.3f}"),
        ("whole run, CPU s", "cpu", 1, "{:.3f}"),
        (f"whole run minus the {IDLE_MS} ms idle, wall s", "prog:wall_busy", 1, "{:.3f}"),
        ("peak RSS, MiB", "rss_kb", per_kib, "{:.1f}"),
        ("touched by the hot passes, MiB", "prog:touched_kb", per_kib, "{:.1f}"),
        (f"resident after {IDLE_MS} ms idle, MiB", "prog:idle_rss_kb", per_kib, "{:.1f}"),
        ("of which untouched by the hot passes, MiB", "prog:idle_untouched_kb", per_kib,
         "{:.1f}"),
    ]
    summary = profile_summary(show, cfg.density)
    text = [f"### hotcold_effect {n} hot nodes, {per} cold records each, {passes} passes",
            "", table(cfg, spec, rows), "",
            f"Profile: {summary['contexts']} contexts, {summary['cold']} cold "
            f"({summary['cold_allocs']} of {summary['allocs']} allocations). "
            + stats_lines(cfg, variants, argv, cwds), "",
            "`memprof-profdata check` of the hinted builds:", "", check_table(checks)]
    return "\n".join(text)


def check_summary(tool, prof, exe, thresholds):
    """`memprof-profdata check`'s JSON summary of exe against the profile
    under clang's default thresholds or the given ones (`--memprof-...`)."""
    out = json.loads(B.run([tool, "check", "--format=json",
                            *[f"--{t[1:]}" for t in thresholds], prof, exe]))
    s = out["summary"]
    # Contexts short of cold by their lifetime alone (their access density
    # is under clang's threshold) and the largest threshold that makes one
    # of them cold.
    short = [c for c in out["contexts"] if c.get("reason") == "lifetime_threshold"]
    would = [int(m.group(1)) for c in short
             for m in [re.search(r"; =(\d+) would make it cold", c.get("why", ""))] if m]
    s["short_lived"] = (len(short), sum(c["bytes"] for c in short), max(would, default=None))
    return s


def mib(b):
    return f"{b / 1048576:.2f} MiB"


def short_text(short):
    n, b, t = short
    return f"{n} ({mib(b)})" + (f", ={t} s" if t is not None else "")


def check_table(checks):
    """One row per (thresholds, summary) of check_summary."""
    header = ["check under", "hinted calls: cold / notcold / ambiguous / hot",
              "cold contexts (bytes)", "reached a cold hint", "missed: why",
              "hinted calls no context reaches",
              "not cold by lifetime alone (largest threshold making one cold)"]
    lines = []
    for label, s in checks:
        missed = "; ".join(f"{r} {m['contexts']} ({mib(m['bytes'])})"
                           for r, m in sorted(s.get("cold_missed", {}).items())) or "none"
        lines.append([label, f"{s['hinted_calls']}: {s['hinted_cold']} / "
                      f"{s['hinted_notcold']} / {s['hinted_ambiguous']} / {s['hinted_hot']}",
                      f"{s['cold_contexts']} ({mib(s['cold_bytes'])})",
                      f"{s['cold_hinted_contexts']} ({mib(s['cold_hinted_bytes'])})",
                      missed, s["unexplained_calls"], short_text(s["short_lived"])])
    return B.table(header, lines)


def checks_of(cfg, name, prof, pieces, default_objs, variants):
    """check of the build with clang's default thresholds (linked here) and
    of the measured builds with the lowered ones, without LTO and with."""
    default_exe = os.path.join(cfg.obj, name + ".default")
    B.run([B.CXX, *default_objs, "-o", default_exe, "-Wl,--whole-archive", pieces[2],
           "-Wl,--no-whole-archive", "-lpthread", "-ldl", "-lm"])
    tool = pieces[1]
    lowered = " ".join(cfg.lowered)
    rows = [("clang's defaults (build and check)", check_summary(tool, prof, default_exe, [])),
            (lowered + " (build and check)",
             check_summary(tool, prof, variants["ours"][0], cfg.lowered))]
    if "ours_lto" in variants:
        rows.append(("LTO, " + lowered + " (build and check)",
                     check_summary(tool, prof, variants["ours_lto"][0], cfg.lowered)))
    return rows


def stats_line(label, classes, arena):
    """A hinted build's stats=1 counts, one sentence."""
    used = ", ".join(f"{k} {a} ({mib(b)})" for k, (a, b) in classes.items() if a)
    return (f"Run of {label} with stats=1 (allocations, bytes asked): {used}; the cold "
            f"arena served {arena[0]} ({mib(arena[1])}).")


def stats_lines(cfg, variants, argv, cwds):
    """stats_line of each hinted build the library serves."""
    builds = [("ours", "hints + libmemprof-hotcold"),
              ("ours_lto", "hints + LTO + libmemprof-hotcold")]
    return " ".join(stats_line(label, *hint_stats(variants[v][0], argv, cwds[v]))
                    for v, label in builds if v in variants)


def program_section(cfg, pieces, prog):
    """The whole loop on one Debian program: profile, merge, the builds,
    check, the interleaved runs."""
    prof_objs = prog.build(["-O2", *B.PROFILE_FLAGS], "prof")
    prof, show = profile(cfg, prog.name, prof_objs, prog.argv, prog.inputs, pieces)
    plain_objs = prog.build(["-O2"], "plain")
    use_objs = prog.build([*cfg.use_flags, f"-fmemory-profile-use={prof}"], "use", fresh=True)
    default_objs = prog.build([*DEFAULT_USE_FLAGS, f"-fmemory-profile-use={prof}"],
                              "use-default", fresh=True)
    lto_objs = None
    if cfg.lto:
        lto_objs = prog.build([*cfg.lto_use_flags, f"-fmemory-profile-use={prof}"], "use-lto",
                              fresh=True)
    variants = link_variants(cfg, prog.name, plain_objs, use_objs, lto_objs, pieces)
    checks = checks_of(cfg, prog.name, prof, pieces, default_objs, variants)
    rows, cwds = measure_all(cfg, prog.name, variants, prog.argv, prog.inputs, None)
    if cfg.reps:
        with open(os.path.join(cwds["plain"], "stdout.txt")) as f:
            prog.validate(f.read())
    s = profile_summary(show, cfg.density)
    spec = [("wall s", "wall", 1, "{:.3f}"), ("CPU s", "cpu", 1, "{:.3f}"),
            ("peak RSS, MiB", "rss_kb", 1 / 1024, "{:.1f}")]
    why = (f"Profile of the representative run: {s['contexts']} contexts, {s['cold']} cold "
           f"under a {COLD_LIFETIME_S} s lifetime threshold; {s['long_lived']} live "
           f"{COLD_LIFETIME_S} s or more on average (the longest {s['max_life_ms']:.0f} ms), "
           f"{s['sparse']} have an access density under {cfg.density:g}. "
           + stats_lines(cfg, variants, prog.argv, cwds))
    return "\n".join([f"### {prog.title}", "", table(cfg, spec, rows), "", why, "",
                      "`memprof-profdata check` of the hinted builds:", "",
                      check_table(checks)])


def context():
    """When, where and with what the figures were measured."""
    clang = B.run([B.CXX, "--version"]).splitlines()[0]
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return (f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs, load average "
            f"at start {load}, {clang}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 repetitions, smaller effect program")
    ap.add_argument("--reps", type=int, help="override repetitions")
    ap.add_argument("--check-only", action="store_true",
                    help="the builds, check and the stats=1 runs; no timed runs")
    ap.add_argument("--cold-density", type=float,
                    help="the builds' -memprof-lifetime-access-density-cold-threshold "
                         f"(default LLVM's {COLD_DENSITY})")
    ap.add_argument("--no-lto", action="store_true",
                    help="leave out the LTO build (hints + LTO + libmemprof-hotcold)")
    ap.add_argument("--programs", default="effect,jsoncpp,ninja",
                    help="comma-separated subset of effect,jsoncpp,ninja")
    cfg = Config(ap.parse_args())
    os.makedirs(cfg.obj, exist_ok=True)
    B.init_wrapper(cfg.obj)
    pieces = build_tree(cfg)
    if not shutil.which(B.CXX):
        sys.exit("bench: clang++-22 is required")
    parts = [context()]
    if "effect" in cfg.programs:
        parts.append(effect_section(cfg, pieces))
    if "jsoncpp" in cfg.programs:
        parts.append(program_section(cfg, pieces, P.Jsoncpp(cfg.obj, cfg.bench_dir)))
    if "ninja" in cfg.programs:
        parts.append(program_section(cfg, pieces,
                                     P.Ninja(cfg.obj, cfg.bench_dir, cfg.quick)))
    text = "\n\n".join(parts) + "\n"
    print(text)
    with open(os.path.join(cfg.bench_dir, "hotcold-results.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
