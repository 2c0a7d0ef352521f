"""harness.py - what the end-to-end tests share.

Compile a C or C++ program with clang (-fmemory-profile), link it against our
runtime or LLVM's, run it in a scratch folder, and read the profile back with
llvm-profdata's `show --memory`.  Ground truth comes from the real LLVM tools;
tests assert exact values against numbers they compute from the program.

Environment: MEMPROF_BUILD_DIR (set by ctest) is the CMake build folder.
"""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("MEMPROF_BUILD_DIR", os.path.join(ROOT, "build"))

# Flags of LLVM's own memprof tests: full stacks through frame pointers.
PROFILE_FLAGS = ["-g", "-fmemory-profile", "-fno-omit-frame-pointer",
                 "-mno-omit-leaf-frame-pointer", "-fno-optimize-sibling-calls"]


def find_built(name):
    """Path of a build product (libmemprof.a, memprof-profdata, ...)."""
    hits = sorted(glob.glob(os.path.join(BUILD, "**", name), recursive=True))
    hits = [h for h in hits if os.path.isfile(h)]
    if not hits:
        raise FileNotFoundError(f"{name} not found under {BUILD}: build first")
    return hits[0]


def profdata_tool():
    return find_built("memprof-profdata")


def run(cmd, check=True, **kw):
    """Run a command, returning CompletedProcess with text output."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, **kw)
    if check and r.returncode != 0:
        raise AssertionError(f"command failed ({r.returncode}): {' '.join(map(str, cmd))}\n"
                             f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r


class Scratch:
    """A temporary folder; kept when MEMPROF_KEEP_SCRATCH is set."""

    def __init__(self, name="t"):
        self.dir = tempfile.mkdtemp(prefix=f"memprof-{name}-")

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def cleanup(self):
        if not os.environ.get("MEMPROF_KEEP_SCRATCH"):
            shutil.rmtree(self.dir, ignore_errors=True)


def compile_program(scratch, src, out="prog", runtime="ours", llvm=22,
                    cflags=(), ldflags=(), opt="-O0"):
    """Compile `src` (a path) with clang-<llvm> -fmemory-profile and link it.

    runtime: "ours"   -> libmemprof.a (whole-archive), no LLVM runtime
             "llvm"   -> LLVM's libclang_rt.memprof, linked by the driver
             "shadow" -> no runtime linked (caller supplies objects in ldflags)
    """
    cxx = src.endswith((".cc", ".cpp"))
    cc = f"clang++-{llvm}" if cxx else f"clang-{llvm}"
    obj = scratch.path(out + ".o")
    run([cc, "-c", opt, *PROFILE_FLAGS, *cflags, src, "-o", obj])
    exe = scratch.path(out)
    if runtime == "llvm":
        run([cc, "-fmemory-profile", obj, "-o", exe, *ldflags])
    elif runtime == "ours":
        lib = find_built("libmemprof.a")
        run([cc, obj, "-o", exe, "-Wl,--whole-archive", lib,
             "-Wl,--no-whole-archive", "-lpthread", "-ldl", "-lm", *ldflags])
    else:
        run([cc, obj, "-o", exe, *ldflags])
    return exe


def run_program(scratch, exe, args=(), env=None, check=True, timeout=120):
    """Run `exe` in the scratch folder; returns (CompletedProcess, [profiles])."""
    before = set(glob.glob(scratch.path("memprof.profraw*")))
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([exe, *args], cwd=scratch.dir, env=e, timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and r.returncode != 0:
        raise AssertionError(f"{exe} exited {r.returncode}\nstderr:\n"
                             f"{r.stderr.decode(errors='replace')}")
    after = sorted(set(glob.glob(scratch.path("memprof.profraw*"))) - before)
    return r, after


def llvm_show_raw(raw, binary, llvm=22):
    """`llvm-profdata-<llvm> show --memory RAW --profiled-binary=BIN`, parsed.

    Returns a list of alloc sites: dicts with 'function' (record GUID),
    'stack' (list of (SymbolName, LineOffset, Column, Inline)) and 'mib'
    (field name -> int), in the tool's order.
    """
    r = run([f"llvm-profdata-{llvm}", "show", "--memory", raw,
             f"--profiled-binary={binary}"])
    return parse_raw_show(r.stdout)


def parse_raw_show(text):
    sites = []
    guid = None
    cur = None
    frame = None
    section = None
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"FunctionGUID: (\d+)", s)
        if m:
            guid = int(m.group(1))
            continue
        if s == "AllocSites:":
            section = "alloc"
            continue
        if s == "CallSites:":
            section = "call"
            continue
        if section != "alloc":
            continue
        if s == "Callstack:":
            cur = {"function": guid, "stack": [], "mib": {}}
            sites.append(cur)
            continue
        if s == "MemInfoBlock:":
            frame = None
            continue
        m = re.match(r"(\w+): (.*)$", s)
        if not m or cur is None:
            continue
        k, v = m.group(1), m.group(2)
        if k == "Function":
            frame = {"Function": int(v)}
            cur["stack"].append(frame)
        elif frame is not None and k in ("SymbolName", "LineOffset", "Column", "Inline"):
            frame[k] = v if k == "SymbolName" else int(v)
        elif re.fullmatch(r"\d+", v):
            cur["mib"][k] = int(v)
    for site in sites:
        site["stack"] = [(f.get("SymbolName"), f.get("LineOffset"), f.get("Column"),
                          f.get("Inline")) for f in site["stack"]]
    return sites


def site_by_line(sites, func, line_offset):
    """The one alloc site whose leaf frame is func:+line_offset."""
    hits = [s for s in sites if s["stack"] and s["stack"][0][0] == func
            and s["stack"][0][1] == line_offset]
    if len(hits) != 1:
        raise AssertionError(f"expected one site {func}+{line_offset}, got {len(hits)}: "
                             f"{[s['stack'][0] for s in sites]}")
    return hits[0]


class ProfTest(unittest.TestCase):
    """A TestCase with a scratch folder per test."""

    def setUp(self):
        self.scratch = Scratch(self.id().split(".")[-1])

    def tearDown(self):
        self.scratch.cleanup()


def main():
    unittest.main(verbosity=2)
