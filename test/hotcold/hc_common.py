"""hc_common.py - what the libmemprof-hotcold tests share: building a
program against the library (static archive or shared object), reading
the library's statistics, and LLVM's hot/cold decision applied to a
profile's contexts (the ground truth of where each block must go).
"""
import os
import re
import unittest

import harness

PROGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs")
INCLUDE = os.path.join(harness.ROOT, "include")

# The test programs keep their cold blocks ~1.3 s: a context is cold when
# its blocks live 1 s on average (LLVM's default is 200 s).
COLD_LIFETIME_S = 1
USE_FLAGS = ["-O2", "-gmlt", "-fdebug-info-for-profiling",
             "-mllvm", f"-memprof-ave-lifetime-cold-threshold={COLD_LIFETIME_S}",
             "-mllvm", "-optimize-hot-cold-new"]

# Every function clang-22 can call for a hinted allocation.
HOT_COLD_SYMBOLS = {
    "_Znwm12__hot_cold_t", "_Znam12__hot_cold_t",
    "_ZnwmRKSt9nothrow_t12__hot_cold_t", "_ZnamRKSt9nothrow_t12__hot_cold_t",
    "_ZnwmSt11align_val_t12__hot_cold_t", "_ZnamSt11align_val_t12__hot_cold_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t",
    "__size_returning_new_hot_cold", "__size_returning_new_aligned_hot_cold",
}


def library_built():
    try:
        harness.find_built("libmemprof-hotcold.a")
        harness.find_built("libmemprof-hotcold.so")
        return True
    except FileNotFoundError:
        return False


needs_library = unittest.skipUnless(
    library_built(), "libmemprof-hotcold not built (libjemalloc-dev missing)")


def lib_flags(kind):
    """Link flags for the static archive or the shared object."""
    if kind == "static":
        return ["-Wl,--whole-archive", harness.find_built("libmemprof-hotcold.a"),
                "-Wl,--no-whole-archive", "-lpthread", "-ldl", "-lm"]
    d = os.path.dirname(harness.find_built("libmemprof-hotcold.so"))
    return [f"-L{d}", "-lmemprof-hotcold", f"-Wl,-rpath,{d}", "-lpthread", "-lm"]


def build(scratch, inputs, out, kind, cflags=()):
    """Compile and link sources or objects against the library."""
    cxx = any(i.endswith((".cc", ".o")) for i in inputs)
    cc = "clang++-22" if cxx else "clang-22"
    # -fno-builtin: the compiler must not drop or fold the calls tested.
    extra = [] if cxx else ["-fno-builtin"]
    exe = scratch.path(out)
    harness.run([cc, "-O2", "-g", *extra, f"-I{INCLUDE}", *cflags, *inputs, "-o", exe,
                 *lib_flags(kind)])
    return exe


def words(line):
    """'a=1 b=x' -> {'a': 1, 'b': 'x'} (numbers as int)."""
    out = {}
    for k, v in re.findall(r"(\w+)=(\S+)", line):
        out[k] = int(v) if re.fullmatch(r"\d+", v) else v
    return out


def parse_stats(text):
    """The statistics lines (docs/hotcold.md) -> {'pid': n, 'hint': {h: {...}},
    'class': {name: {...}}, 'cold_arena': {...}}."""
    st = {"hint": {}, "class": {}, "cold_arena": None, "pid": None}
    for line in text.splitlines():
        if not line.startswith("memprof-hotcold: "):
            continue
        body = line[len("memprof-hotcold: "):]
        w = words(body)
        if body.startswith("pid="):
            st["pid"] = w["pid"]
        elif body.startswith("hint="):
            st["hint"][w["hint"]] = w
        elif body.startswith("class="):
            st["class"][w["class"]] = w
        elif body.startswith("cold_arena"):
            st["cold_arena"] = w
    return st


def profile_sites(show_text):
    """Alloc sites of `memprof-profdata show --symbolized`: dicts with the
    leaf function's plain name ('leaf') and the MIB fields."""
    sites = []
    cur = None
    for line in show_text.splitlines():
        s = line.strip()
        if s == "- Callstack:":
            cur = {"leaf": None, "mib": {}}
            sites.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"- \{ Function: .*\} # (\S+)", s)
        if m and cur["leaf"] is None:
            cur["leaf"] = demangle_plain(m.group(1))
            continue
        m = re.match(r"(\w+):\s+(\d+)$", s)
        if m:
            cur["mib"][m.group(1)] = int(m.group(2))
    return sites


def demangle_plain(sym):
    """_Z8cold_newv -> cold_new; other names unchanged."""
    m = re.match(r"_Z(\d+)(\w+)", sym)
    return m.group(2)[:int(m.group(1))] if m else sym


def llvm_is_cold(mib, lifetime_s=COLD_LIFETIME_S):
    """LLVM 22's getAllocType: cold when the average lifetime reaches the
    threshold and the lifetime access density is below 0.05 (accesses per
    byte per second, stored x100)."""
    n = mib["AllocCount"]
    return (mib["TotalLifetimeAccessDensity"] / n / 100 < 0.05 and
            mib["TotalLifetime"] / n >= lifetime_s * 1000)


def parse_site_file(text):
    """The call-site file (docs/hotcold.md, "The call-site file") ->
    {'header': {...}, 'modules': [{...}], 'sites': [{...}], 'total': {...}}."""
    lines = text.splitlines()
    assert lines[0] == "memprof-hotcold-sites version=1", lines[0]
    assert lines[-1] == "end", lines[-1]
    out = {"header": words(lines[1]), "modules": [], "sites": [], "total": None}
    for line in lines[2:-1]:
        if line.startswith("module="):
            head, _, path = line.partition(" path=")
            m = words(head)
            m["path"] = path
            out["modules"].append(m)
        elif line.startswith("site="):
            out["sites"].append(words(line))
        elif line.startswith("total "):
            out["total"] = words(line)
    return out


def symbolize(exe, address):
    """The function (plain name) holding the code at a link-time address."""
    out = harness.run(["llvm-symbolizer-22", f"--obj={exe}", "--no-inlines",
                       "--no-demangle", hex(address)]).stdout
    return demangle_plain(out.splitlines()[0].strip())
