"""bench/bench_pgo.py: section 3, one profile for the PGO build.

For each real program of section 1 (sqlite3, jsoncpp, leveldb, lua): build
it once with clang-22 -fprofile-generate and once with -fmemory-profile
(LLVM's runtime), run the workload under each, and time the combined merge

    merge ir.profraw memprof.profraw --profiled-binary=EXE -o OUT

with llvm-profdata-22 and with memprof-profdata (defaults: index 12 and our
symbolized section), interleaved, medians; then the same with TRAINING
copies of each raw profile, as a training of several runs of each build
gives (copies: the same work per input as distinct runs, without
re-running the workloads). The
instrumentation part (ir.profraw merged alone, --index-version=13) must be
llvm-profdata-22's bytes, and the table says whether the combined file is
too: its memory part differs where one raw profile has two stack ids that
symbolize to the same frames (LLVM keeps two alloc sites, we merge them).
"""
import os
import subprocess

import bench_lib as B
import bench_programs as P
from bench_lib import log, median, fmt, ratio

TRAINING = 8

# key -> (Debian source dir key, build function, C++?)
BUILDS = {
    "sqlite": ("sqlite3", P.build_sqlite, False),
    "jsoncpp": ("libjsoncpp", P.build_jsoncpp, True),
    "leveldb": ("leveldb", P.build_leveldb, True),
    "lua": ("lua5.4", P.build_lua, False),
}


def pgo_exe(cfg, key, srcdir):
    _, build, cxx = BUILDS[key]
    objs = build(cfg, srcdir, P.PGO_INSTRUMENT, "-pgo")
    exe = os.path.join(cfg.obj, key + ".pgo")
    if B.stale(exe, objs):
        B.run([B.CXX if cxx else B.CC, "-fprofile-generate", *objs, "-lpthread",
               "-ldl", "-lm", "-o", exe])
    return exe


def record(cfg, w, exe, name, env=None):
    """Run exe with w's arguments in a fresh directory; return the one raw
    profile it wrote, moved to $BENCH_DIR/pgo/name."""
    cwd = B.fresh_dir(os.path.join(cfg.work, "pgo-run"))
    for f in w.inputs:
        os.symlink(f, os.path.join(cwd, os.path.basename(f)))
    e = dict(os.environ, **(env or {}))
    e.pop("MEMPROF_OPTIONS", None)
    subprocess.run([exe, *w.tail], cwd=cwd, env=e, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    P.cleanup(cfg)
    got = [f for f in os.listdir(cwd) if f.endswith(".profraw") or ".profraw." in f]
    assert len(got) == 1, got
    dst = os.path.join(cfg.bench_dir, "pgo", name)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    os.replace(os.path.join(cwd, got[0]), dst)
    return dst


def merge_cmd(tool, irs, mems, exe, out, *extra):
    prog = B.LLVM_PROFDATA if tool == "llvm" else tool
    tail = [*mems, f"--profiled-binary={exe}"] if mems else []
    return [prog, "merge", *irs, *tail, *extra, "-o", out]


def identical(cfg, tool, irs, mems, exe):
    a = os.path.join(cfg.work, "pgo-same.llvm")
    b = os.path.join(cfg.work, "pgo-same.ours")
    B.run(merge_cmd("llvm", irs, mems, exe, a))
    B.run(merge_cmd(tool, irs, mems, exe, b, "--index-version=13",
                    "--no-symbolized-section"))
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return "yes" if fa.read() == fb.read() else "no"


def timed(cfg, tool, irs, mems, exe):
    """Median wall seconds of llvm's and our merge, interleaved, and the
    ratio of their median CPU times (ours runs a few threads: on a loaded
    machine each hand-over waits for a CPU, which the wall time shows)."""
    walls = {"llvm": [], "ours": []}
    cpus = {"llvm": [], "ours": []}
    for _ in range(cfg.reps):
        for t, prog in (("llvm", "llvm"), ("ours", tool)):
            s = B.measure(merge_cmd(prog, irs, mems, exe,
                                    os.path.join(cfg.work, f"pgo.{t}")))
            if s.rc == 0:
                walls[t].append(s.wall)
                cpus[t].append(s.cpu)
    med = lambda xs: median(xs) if xs else None  # noqa: E731
    return (med(walls["llvm"]), med(walls["ours"]),
            ratio(med(cpus["ours"]), med(cpus["llvm"])))


def measure_program(cfg, key, w, srcdir, tool):
    exe_mem = w.exes["llvm"]
    ir = record(cfg, w, pgo_exe(cfg, key, srcdir), key + ".ir.profraw",
                {"LLVM_PROFILE_FILE": "ir.profraw"})
    mem = record(cfg, w, exe_mem, key + ".memprof.profraw")
    instr_same = identical(cfg, tool, [ir], [], exe_mem)
    same = identical(cfg, tool, [ir], [mem], exe_mem)
    lw, ow, oc = timed(cfg, tool, [ir], [mem], exe_mem)
    lt, ot, tc = timed(cfg, tool, [ir] * TRAINING, [mem] * TRAINING, exe_mem)
    return [key, str(os.path.getsize(ir)), str(os.path.getsize(mem)), fmt(lw),
            fmt(ow), fmt(ratio(ow, lw)), fmt(oc), fmt(lt), fmt(ot),
            fmt(ratio(ot, lt)), fmt(tc), instr_same, same]


def section_pgo(cfg, lib_ours, tool_ours, bench_objs):
    title = "## 3. One profile for the PGO build: instrumentation + memory merge\n\n"
    if not tool_ours:
        return title + "Our tool: " + B.NOT_BUILT + "\n"
    dirs = B.fetch_sources(os.path.join(cfg.bench_dir, "src"), P.SOURCES)
    keys = [k for k in BUILDS if cfg.programs is None or k in cfg.programs]
    rows = []
    for key, build in P.workloads(cfg, dirs, bench_objs, lib_ours, keys):
        log(f"pgo: {key}, {cfg.reps} reps")
        try:
            w = build()
            rows.append(measure_program(cfg, key, w, dirs[BUILDS[key][0]],
                                        tool_ours))
        except (RuntimeError, subprocess.CalledProcessError, AssertionError) as e:
            log(f"{key}: {str(e)[-600:]}")
            rows.append([key] + ["failed"] * 12)
        finally:
            P.cleanup(cfg)
    hdr = ["program", "ir.profraw bytes", "memprof.profraw bytes",
           "1+1: llvm s", "ours s", "ours/llvm (<= 0.2)", "CPU ours/llvm",
           f"{TRAINING}+{TRAINING}: llvm s", "ours s", "ours/llvm (<= 0.2)",
           "CPU ours/llvm",
           "instr part = llvm's", "whole file = llvm's"]
    text = (title + "`merge ir.profraw memprof.profraw --profiled-binary=EXE`: "
            "clang-22 -fprofile-generate build and -fmemory-profile build "
            "(LLVM's runtime) of the same sources, same workload; "
            f"{TRAINING}+{TRAINING}: {TRAINING} copies of each (llvm-profdata-22 "
            "keeps the memory profile of the first only). Equality: "
            "--index-version=13 --no-symbolized-section against "
            "llvm-profdata-22's default.\n\n" + B.table(hdr, rows) + "\n")
    print(text, flush=True)
    return text
