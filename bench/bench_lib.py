"""bench/bench_lib.py: process measurement, build steps and tables for bench.py.

Owns: running one child and reading its wall time, CPU time and peak RSS
(wait4 rusage of that child alone), make-like "rebuild if older" steps,
fetching the Debian sources, locating/building our own pieces and deciding
whether they are real yet, medians and the markdown tables.
"""
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_SRC = os.path.join(ROOT, "bench")
CC = "clang-22"
CXX = "clang++-22"
LLVM_PROFDATA = "llvm-profdata-22"
PROFILE_FLAGS = ["-g", "-fmemory-profile", "-fno-omit-frame-pointer",
                 "-mno-omit-leaf-frame-pointer", "-fno-optimize-sibling-calls"]
NOT_BUILT = "not built"


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Sample:
    """One measured run of a child process."""
    def __init__(self, wall, cpu, rss_kb, rc, exit_lag=None):
        self.wall, self.cpu, self.rss_kb, self.rc = wall, cpu, rss_kb, rc
        self.exit_lag = exit_lag  # seconds from main's end (exit stamp) to reaped


RUSAGE_RUN = None  # path of the compiled rusage_run.c, set by init_wrapper


def init_wrapper(obj_dir):
    global RUSAGE_RUN
    RUSAGE_RUN = compile_exe(os.path.join(BENCH_SRC, "rusage_run.c"),
                             os.path.join(obj_dir, "rusage_run"))


def compile_exe(src, exe):
    if stale(exe, [src]):
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        run([CC, "-O2", src, "-o", exe])
    return exe


def fresh_usage_file(tag):
    """Where rusage_run writes one command's usage; none there yet."""
    usage = os.path.join(tempfile.gettempdir(), f"bench-rusage.{os.getpid()}{tag}")
    if os.path.exists(usage):
        os.unlink(usage)
    return usage


def read_usage(usage):
    """(utime, stime, maxrss_kb, start, end) that rusage_run wrote, or None."""
    try:
        with open(usage) as f:
            utime, stime, rss_kb, start, end = f.read().split()
    except (OSError, ValueError):
        return None
    return float(utime), float(stime), int(rss_kb), float(start), float(end)


def measure_pair(runs):
    """Two commands at once, each pinned to a CPU of its own (the first to
    CPU 0, the second to CPU 1); runs = [(argv, cwd, env)] * 2.  Returns
    their CPU times (None for one that failed).  On a shared machine the
    two see the same neighbours at the same moment, so the ratio of their
    times varies far less than the times of runs made one after the
    other; swap the order between repetitions to cancel the CPUs'
    differences."""
    procs = []
    for cpu, (argv, cwd, env) in enumerate(runs):
        full_env = dict(os.environ)
        full_env.update(env or {})
        usage = fresh_usage_file(f".{cpu}")
        p = subprocess.Popen([RUSAGE_RUN, usage, *argv], cwd=cwd, env=full_env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=lambda c=cpu: os.sched_setaffinity(0, {c}))
        procs.append((p, usage))
    out = []
    for p, usage in procs:
        _, err = p.communicate()
        u = read_usage(usage) if p.returncode == 0 else None
        if p.returncode != 0:
            log(f"{' '.join(p.args)[:200]} exited {p.returncode}: {err[-400:]!r}")
        out.append(u[0] + u[1] if u else None)
    return out


def pair_ratio(rep, base, other):
    """measure_pair of base and other ((argv, cwd, env) each), the CPUs
    swapped on odd repetitions: other's CPU time over base's, None if
    either failed."""
    first, second = (base, other) if rep % 2 == 0 else (other, base)
    a, b = measure_pair([first, second])
    b_cpu, o_cpu = (a, b) if rep % 2 == 0 else (b, a)
    return o_cpu / b_cpu if b_cpu and o_cpu else None


def alone_ratio(rep, base, other):
    """base and other ((argv, cwd, env) each) one after the other, each
    with the machine to itself, the order swapped on odd repetitions:
    other's CPU time over base's, None if either failed.  What a program
    loses to a neighbour on the shared caches, which a pair's ratio
    carries, is not in it."""
    order = (base, other) if rep % 2 == 0 else (other, base)
    cpu = []
    for argv, cwd, env in order:
        s = measure(argv, cwd=cwd, env=env)
        cpu.append(s.cpu if s.rc == 0 else None)
    b_cpu, o_cpu = cpu if rep % 2 == 0 else cpu[::-1]
    return o_cpu / b_cpu if b_cpu and o_cpu else None


def measure(argv, cwd=None, env=None, stdout=subprocess.DEVNULL, stamp=None):
    """Run argv once through rusage_run (CPU and peak RSS of argv alone)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    if stamp:
        full_env["BENCH_EXIT_STAMP"] = stamp
        if os.path.exists(stamp):
            os.unlink(stamp)
    usage = fresh_usage_file("")
    t0 = time.monotonic()
    proc = subprocess.run([RUSAGE_RUN, usage, *argv], cwd=cwd, env=full_env,
                          stdout=stdout, stderr=subprocess.PIPE)
    t1 = time.monotonic()
    if proc.returncode != 0:
        log(f"{' '.join(argv)[:200]} exited {proc.returncode}: {proc.stderr[-400:]!r}")
    u = read_usage(usage)
    if u is None:
        return Sample(t1 - t0, None, None, proc.returncode or 1)
    utime, stime, rss_kb, start, end = u
    # The command's own wall time, from rusage_run's fork to its reaping
    # (t1 - t0 would add Python's ~2 ms of subprocess overhead).
    lag = None
    if stamp and os.path.exists(stamp):
        with open(stamp) as f:
            lag = end - float(f.read())
    return Sample(end - start, utime + stime, rss_kb, proc.returncode, lag)


def _children():
    """pid -> parent pid of every process /proc lists now."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
                out[int(d)] = int(st[st.rfind(")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return out


def _rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_peak_rss(argv, cwd=None, env=None, every=0.01):
    """Run argv once; the peak of the summed RSS of it and all its
    descendants, read from /proc every `every` seconds (KB; None if the
    command failed).  wait4's ru_maxrss gives the largest process only: a
    tool that keeps its data in a helper process (heaptrack's
    interpreter) looks smaller by it than it is."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    with tempfile.TemporaryFile() as err:  # a pipe could fill while we poll
        proc = subprocess.Popen(argv, cwd=cwd, env=full_env, stdout=subprocess.DEVNULL,
                                stderr=err)
        peak = 0
        while proc.poll() is None:
            parent = _children()
            tree, grew = {proc.pid}, True
            while grew:
                new = {c for c, pp in parent.items() if pp in tree} - tree
                tree |= new
                grew = bool(new)
            peak = max(peak, sum(_rss_kb(p) for p in tree))
            time.sleep(every)
        if proc.returncode != 0:
            err.seek(0)
            log(f"{' '.join(argv)[:200]} exited {proc.returncode}: {err.read()[-400:]!r}")
            return None
    return peak


def run(argv, cwd=None, quiet=True):
    """Build step: run, raise with the tail of the output on failure."""
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:6])}... failed:\n{r.stdout[-2000:]}")
    return r.stdout


def stale(target, deps):
    if not os.path.exists(target):
        return True
    t = os.path.getmtime(target)
    return any(os.path.getmtime(d) > t for d in deps if os.path.exists(d))


def compile_obj(src, obj, cc, flags):
    if stale(obj, [src]):
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        log(f"compile {os.path.basename(src)}")
        run([cc, *flags, "-c", src, "-o", obj])
    return obj


def compile_objs(pairs, cc, flags, jobs=2):
    """compile_obj over (src, obj) pairs, jobs at a time; the objects in order."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda p: compile_obj(p[0], p[1], cc, flags), pairs))


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def quartiles(xs):
    """(first, third) quartile of xs (None left out), or None for fewer
    than two values."""
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return None
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


# ---- sources -------------------------------------------------------------

DEB_SRC_FILE = "/etc/apt/sources.list.d/bench-deb-src.sources"
DEB_SRC = """Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


def have_deb_src():
    for d in ["/etc/apt/sources.list.d", "/etc/apt"]:
        for name in os.listdir(d):
            p = os.path.join(d, name)
            if os.path.isfile(p) and (name.endswith(".sources") or name.endswith(".list")):
                with open(p) as f:
                    if "deb-src" in f.read():
                        return True
    return False


def fetch_sources(src_dir, packages):
    """apt-get source each package once into src_dir; returns unpacked dirs."""
    os.makedirs(src_dir, exist_ok=True)
    dirs = {}
    missing = []
    for pkg, prefix in packages:
        hits = [d for d in os.listdir(src_dir)
                if d.startswith(prefix + "-") and os.path.isdir(os.path.join(src_dir, d))]
        if hits:
            dirs[pkg] = os.path.join(src_dir, sorted(hits)[-1])
        else:
            missing.append((pkg, prefix))
    if missing:
        if not have_deb_src():
            log(f"adding deb-src for bookworm in {DEB_SRC_FILE}")
            with open(DEB_SRC_FILE, "w") as f:
                f.write(DEB_SRC)
        run(["apt-get", "update", "-qq"])
        for pkg, prefix in missing:
            log(f"apt-get source {pkg}")
            run(["apt-get", "source", "-qq", pkg], cwd=src_dir)
            hits = [d for d in os.listdir(src_dir)
                    if d.startswith(prefix + "-") and os.path.isdir(os.path.join(src_dir, d))]
            dirs[pkg] = os.path.join(src_dir, sorted(hits)[-1])
    return dirs


# ---- our pieces ----------------------------------------------------------

def build_ours(bench_dir):
    """Paths of (libmemprof.a, memprof-profdata), each None when unavailable.

    MEMPROF_BUILD_DIR selects an existing build; otherwise the tree is built
    (runtime + tool only, no tests) in BENCH_DIR/tree.
    """
    given = os.environ.get("MEMPROF_BUILD_DIR")
    tree = given or os.path.join(bench_dir, "tree")
    failed = set()
    if not given:
        try:
            log("building our runtime and tool in " + tree)
            run(["cmake", "-S", ROOT, "-B", tree, "-DCMAKE_BUILD_TYPE=Release",
                 "-DMEMPROF_BUILD_TESTS=OFF"])
        except RuntimeError as e:
            log(f"configure failed: {str(e)[-300:]}")
        for target in ["memprof", "memprof-profdata"]:
            try:
                run(["cmake", "--build", tree, "--target", target, "-j2"])
            except RuntimeError as e:
                # An older binary may still be there: measuring it would
                # report figures for code that is no longer in the tree.
                failed.add(target)
                log(f"{target} not built: {str(e)[-300:]}")
    lib = os.path.join(tree, "runtime", "libmemprof.a")
    tool = os.path.join(tree, "profdata", "memprof-profdata")
    lib_ok = "memprof" not in failed and runtime_is_real(lib)
    tool_ok = "memprof-profdata" not in failed and os.path.exists(tool)
    return (lib if lib_ok else None, tool if tool_ok else None)


def runtime_is_real(lib):
    """A placeholder archive exists early on; the real one defines these."""
    if not os.path.exists(lib):
        return False
    out = subprocess.run(["nm", "--defined-only", lib], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if len(line.split()) == 3}
    need = {"__memprof_init", "__memprof_shadow_memory_dynamic_address", "malloc", "free"}
    missing = need - names
    if missing:
        log(f"{lib}: not a full runtime yet (missing {sorted(missing)})")
    return not missing


# ---- linking the three variants -----------------------------------------

def link_variants(objs, out_base, bench_objs, lib_ours, cxx=True):
    """floor / llvm / ours executables from the same objects.

    bench_objs = (floor_rt.o, exit_stamp.o). Returns {variant: path or None}.
    """
    floor_o, stamp_o = bench_objs
    drv = CXX if cxx else CC
    common = ["-Wl,--wrap=main", stamp_o]
    libs = ["-lpthread", "-ldl", "-lm"]
    out = {}
    plans = {
        "floor": [drv, *objs, *common, floor_o, *libs],
        "llvm": [drv, "-fmemory-profile", *objs, *common, *libs],
    }
    if lib_ours:
        plans["ours"] = [drv, *objs, *common, "-Wl,--whole-archive", lib_ours,
                         "-Wl,--no-whole-archive", *libs]
    for variant in ["floor", "llvm", "ours"]:
        exe = f"{out_base}.{variant}"
        if variant not in plans:
            out[variant] = None
            continue
        deps = list(objs) + [floor_o, stamp_o] + ([lib_ours] if variant == "ours" else [])
        if stale(exe, deps):
            try:
                run(plans[variant] + ["-o", exe])
            except RuntimeError as e:
                log(f"link {exe} failed: {str(e)[-400:]}")
                out[variant] = None
                continue
        out[variant] = exe
    return out


# ---- formatting ----------------------------------------------------------

def fmt(x, spec="{:.3f}"):
    if x is None:
        return NOT_BUILT
    if isinstance(x, str):
        return x
    return spec.format(x)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


def ratio(a, b):
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or b == 0:
        return None
    return a / b


def clean_profiles(cwd):
    """Delete the raw profiles a run left; return the size of the largest."""
    size = 0
    for name in os.listdir(cwd):
        if name.startswith("memprof.profraw"):
            p = os.path.join(cwd, name)
            size = max(size, os.path.getsize(p))
            os.unlink(p)
    return size


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path
