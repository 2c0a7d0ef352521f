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
import struct
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("MEMPROF_BUILD_DIR", os.path.join(ROOT, "build"))

# The symbolizer asks debuginfod servers for missing debug files when this
# is set: tests only ever ask the servers they start themselves.
os.environ.pop("DEBUGINFOD_URLS", None)

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


def prog_path(test_file, name):
    """Path of test program `name` in the progs/ folder next to the test
    file `test_file` (pass __file__): each test folder keeps its C/C++
    programs there as files of their own, which compile on their own
    (test/schema/test_progs_compile.py)."""
    return os.path.join(os.path.dirname(os.path.abspath(test_file)), "progs", name)


def prog_text(test_file, name):
    """The text of progs/`name` next to `test_file` (see prog_path)."""
    with open(prog_path(test_file, name)) as f:
        return f.read()


def marker_lines(text):
    """Map each `// @name` marker of a C/C++ source to its line number
    (1-based), for tests that check absolute source lines."""
    return {m.group(1): no for no, line in enumerate(text.splitlines(), 1)
            for m in [re.search(r"//\s*@(\w+)", line)] if m}


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


# ctest's SKIP_RETURN_CODE for our entries (test/CMakeLists.txt): a run in
# which every test was skipped exits with it and shows as skipped.
SKIP_EXIT = 77


def skip_file(name=None):
    """Where the ctest entry `name` (default: $MEMPROF_TEST_NAME, which
    test/CMakeLists.txt sets) records why it skipped tests: one line per
    reason in $MEMPROF_BUILD_DIR/test-skips/<name>.txt, which
    scripts/test.sh prints after ctest's summary (lib/summary.py).  None
    outside ctest."""
    name = name or os.environ.get("MEMPROF_TEST_NAME")
    return os.path.join(BUILD, "test-skips", name + ".txt") if name else None


def record_skips(lines):
    """Write the skip reasons `lines` for this ctest entry (see skip_file)."""
    path = skip_file()
    if not path or not lines:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("".join(line.replace("\n", " ") + "\n" for line in lines))


def _skipped_method(test):
    """The test method a skip belongs to (a subtest's own test's); "the
    class" for a SkipTest raised by setUpClass."""
    test = getattr(test, "test_case", test)  # unittest's _SubTest
    return getattr(test, "_testMethodName", None) or "the class"


def _skip_lines(result, run):
    """One line per skip reason: the reason, then which tests ("all N
    tests", or "k of N: test_a, test_b")."""
    by_reason = {}
    for test, reason in result.skipped:
        names = by_reason.setdefault(reason.strip() or "(no reason given)", [])
        if _skipped_method(test) not in names:
            names.append(_skipped_method(test))
    lines = []
    for reason, names in by_reason.items():
        if run == 0 or (len(by_reason) == 1 and len(names) == run):
            which = f"all {run} tests" if run > 1 else "the class" if run == 0 else "1 test"
        else:
            shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
            which = f"{len(names)} of {run}: {shown}"
        lines.append(f"{reason} ({which})")
    return lines


def main():
    """Run the file's tests (or those named on the command line: ctest
    runs one TestCase class per entry).  Exits 0 if all passed, 1 if any
    failed, SKIP_EXIT if every test that ran was skipped (or setUpClass
    skipped the class).  Skip reasons go to skip_file()."""
    prog = unittest.main(verbosity=2, exit=False)
    r = prog.result
    record_skips(_skip_lines(r, r.testsRun))
    if not r.wasSuccessful():
        sys.exit(1)
    skipped_tests = {_skipped_method(t) for t, _ in r.skipped} - {"the class"}
    if r.skipped and len(skipped_tests) == r.testsRun:
        sys.exit(SKIP_EXIT)
    if r.skipped:
        print(f"partly skipped: {len(skipped_tests)} of {r.testsRun} tests")
    sys.exit(0)


# ---- runtime API tests (rtapi): sites marked in the program's source ----

def marked_sites(text):
    """Map each `// @name` marker of a C/C++ source to (function, LineOffset).

    The function is the nearest definition above the marker: a line that
    starts in column 0, contains '(' and ends with '{'; LineOffset is the
    distance from that line, which is what llvm-profdata shows."""
    marks = {}
    func, func_line = None, None
    for no, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^[A-Za-z_].*?\b(\w+)\s*\([^;]*\{\s*$", line)
        if m:
            func, func_line = m.group(1), no
        m = re.search(r"//\s*@(\w+)", line)
        if m:
            marks[m.group(1)] = (func, no - func_line)
    return marks


def profile_sites(scratch, src, runtime="ours", llvm=22, cflags=(), ldflags=(),
                  env=None, out="prog", profdata=None, opt="-O0"):
    """Compile `src` (path), run it once, return (sites, CompletedProcess).

    Exactly one profile file must be written; it is read with
    llvm-profdata-<profdata or llvm>."""
    exe = compile_program(scratch, src, out=out, runtime=runtime, llvm=llvm,
                          cflags=cflags, ldflags=ldflags, opt=opt)
    r, raws = run_program(scratch, exe, env=env)
    if len(raws) != 1:
        raise AssertionError(f"expected one profile, got {raws}")
    shown = run([f"llvm-profdata-{profdata or llvm}", "show", "--memory", raws[0],
                 f"--profiled-binary={exe}"])
    sites = attach_histograms(parse_raw_show(shown.stdout), shown.stdout)
    os.unlink(raws[0])
    return sites, r


def attach_histograms(sites, text):
    """Add 'hist' (list of ints, [] when absent) to each alloc site parsed
    by parse_raw_show from the same `show --memory` text."""
    hists = []
    section = None
    for line in text.splitlines():
        s = line.strip()
        if s in ("AllocSites:", "CallSites:"):
            section = s
        elif s.startswith("FunctionGUID:"):
            section = None
        elif section == "AllocSites:" and s == "Callstack:":
            hists.append([])
        elif section == "AllocSites:" and s.startswith("AccessHistogramValues:"):
            hists[-1] = [int(v) for v in s.split(":", 1)[1].split()]
    if len(hists) != len(sites):
        raise AssertionError("histogram parse out of step with the sites")
    for site, h in zip(sites, hists):
        site["hist"] = h
    return sites


def find_marked(sites, marks, name):
    """The site of marker `name`, or None when the profile has none."""
    func, off = marks[name]
    hits = [s for s in sites if s["stack"] and s["stack"][0][0] == func
            and s["stack"][0][1] == off]
    if len(hits) > 1:
        raise AssertionError(f"several sites for @{name} ({func}+{off})")
    return hits[0] if hits else None


def assert_site(test, sites, marks, name, alloc_count, total_size, accesses):
    """Exact AllocCount, TotalSize and TotalAccessCount of marker `name`."""
    s = find_marked(sites, marks, name)
    test.assertIsNotNone(s, f"no alloc site for @{name} {marks[name]}")
    got = (s["mib"]["AllocCount"], s["mib"]["TotalSize"], s["mib"]["TotalAccessCount"])
    test.assertEqual(got, (alloc_count, total_size, accesses),
                     f"@{name}: (AllocCount, TotalSize, TotalAccessCount)")


# ---- raw profiles read directly (runtime tests) ----

MIB_FIELDS = [
    ("AllocCount", "I"), ("TotalAccessCount", "Q"), ("MinAccessCount", "Q"),
    ("MaxAccessCount", "Q"), ("TotalSize", "Q"), ("MinSize", "I"), ("MaxSize", "I"),
    ("AllocTimestamp", "I"), ("DeallocTimestamp", "I"), ("TotalLifetime", "Q"),
    ("MinLifetime", "I"), ("MaxLifetime", "I"), ("AllocCpuId", "I"), ("DeallocCpuId", "I"),
    ("NumMigratedCpu", "I"), ("NumLifetimeOverlaps", "I"), ("NumSameAllocCpu", "I"),
    ("NumSameDeallocCpu", "I"), ("DataTypeId", "Q"), ("TotalAccessDensity", "Q"),
    ("MinAccessDensity", "I"), ("MaxAccessDensity", "I"),
    ("TotalLifetimeAccessDensity", "Q"), ("MinLifetimeAccessDensity", "I"),
    ("MaxLifetimeAccessDensity", "I"), ("AccessHistogramSize", "I"), ("AccessHistogram", "Q")]
RAW_MAGIC = 0xFF6D70726F667281
RAW_NOTE_MAGIC = 0x31657461706f726d  # memprof_format.h MPF_RAW_NOTE_MAGIC


def decode_v5(v):
    """A v5 on-disk u16 histogram value -> count."""
    return (v & 0xFFF) << (v >> 12)


def read_raw(path):
    """Our own reader of a raw profile file (v3/v4/v5, concatenated dumps),
    independent of llvm-profdata, for exact header fields, MIBs, histograms
    and stacks.  Returns a list of profiles: dict(version, total, segments,
    mibs{id: dict (+ "hist")}, stacks{id: [pc]}, mib_offset, stack_offset,
    note): note is None or dict(sample_interval, uninstrumented, paths,
    temporaries) from the runtime's note after the stacks
    (docs/raw-format.md section 7), paths being each segment's module path
    and temporaries {stack id: count}."""
    with open(path, "rb") as f:
        data = f.read()
    off, out = 0, []
    while off < len(data):
        magic, ver, total, segoff, miboff, stkoff = struct.unpack_from("<6Q", data, off)
        assert magic == RAW_MAGIC, f"bad magic at {off}"
        assert total % 8 == 0 and segoff == 48
        prof = {"version": ver, "total": total, "segments": [], "mibs": {}, "stacks": {},
                "mib_offset": miboff, "stack_offset": stkoff}
        p = off + segoff
        (n,) = struct.unpack_from("<Q", data, p)
        p += 8
        for _ in range(n):
            s, e, o, bsz = struct.unpack_from("<4Q", data, p)
            prof["segments"].append((s, e, o, data[p + 32:p + 32 + bsz]))
            p += 64
        assert p == off + miboff
        fields = MIB_FIELDS if ver >= 4 else MIB_FIELDS[:-2]
        fmt = "<" + "".join(c for _, c in fields)
        (n,) = struct.unpack_from("<Q", data, p)
        p += 8
        for _ in range(n):
            (sid,) = struct.unpack_from("<Q", data, p)
            p += 8
            mib = dict(zip([f for f, _ in fields], struct.unpack_from(fmt, data, p)))
            p += struct.calcsize(fmt)
            hs = mib.get("AccessHistogramSize", 0)
            if ver == 4:
                mib["hist"] = list(struct.unpack_from(f"<{hs}Q", data, p))
                p += 8 * hs
            elif ver == 5:
                mib["hist"] = [decode_v5(v) for v in struct.unpack_from(f"<{hs}H", data, p)]
                p += 2 * hs
            prof["mibs"][sid] = mib
        assert (p - off + 7) // 8 * 8 == stkoff, "MIB region size mismatch"
        assert all(b == 0 for b in data[p:off + stkoff]), "padding must be zero"
        p = off + stkoff
        (n,) = struct.unpack_from("<Q", data, p)
        p += 8
        for _ in range(n):
            sid, k = struct.unpack_from("<2Q", data, p)
            p += 16
            prof["stacks"][sid] = list(struct.unpack_from(f"<{k}Q", data, p))
            p += 8 * k
        prof["note"] = None
        if off + total - p >= 32 and struct.unpack_from("<Q", data, p)[0] == RAW_NOTE_MAGIC:
            _, size, interval, flags = struct.unpack_from("<4Q", data, p)
            paths, temporaries, q = [], {}, p + 32
            if size > 32:
                (n,) = struct.unpack_from("<Q", data, q)
                q += 8
                for _ in range(n):
                    (k,) = struct.unpack_from("<Q", data, q)
                    paths.append(data[q + 8:q + 8 + k].decode())
                    q += 8 + (k + 7) // 8 * 8
                (n,) = struct.unpack_from("<Q", data, q)
                q += 8
                for _ in range(n):
                    sid, count = struct.unpack_from("<2Q", data, q)
                    temporaries[sid] = count
                    q += 16
                assert q == p + size, "note size does not end its tables"
            prof["note"] = {"sample_interval": interval, "uninstrumented": bool(flags & 1),
                            "paths": paths, "temporaries": temporaries}
            p += size
        assert (p - off + 7) // 8 * 8 == total
        out.append(prof)
        off += total
    assert off == len(data)
    return out


def mibs_by_size(prof):
    """{allocation size: MIB} of one profile read by read_raw (sizes must
    tell the program's blocks apart)."""
    return {m["TotalSize"] // m["AllocCount"]: m for m in prof["mibs"].values()}


# ---- memprof-profdata tests (pdraw): LLVM's memprof YAML, GUIDs, tools ----

_FRAME_RE = re.compile(r"\{\s*Function:\s*([^,\s]+)\s*,\s*LineOffset:\s*(\d+)\s*,"
                       r"\s*Column:\s*(\d+)\s*,\s*IsInlineFrame:\s*(true|false)\s*\}")


def llvm_guid(name):
    """LLVM's function GUID: the first 8 MD5 bytes of the name, little-endian."""
    import hashlib
    return int.from_bytes(hashlib.md5(name.encode()).digest()[:8], "little")


def _yaml_int(v):
    v = v.strip()
    return int(v, 16) if v.lower().startswith("0x") else int(v) if v.isdigit() else v


def parse_memprof_yaml(text):
    """LLVM's memprof YAML (`show --memory` of an indexed file, or the
    HeapProfileRecords input of `merge`) -> {guid: {"allocs": [(stack, mib)],
    "calls": [stack]}}.  A stack is a tuple of (Function, LineOffset, Column,
    IsInline) frames, leaf first; Function is an int (hex GUID) or a name;
    mib maps field name -> int.  Comments ('#...') are ignored."""
    recs = {}
    rec = site = None
    where = None
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        s = line.strip()
        if not s or s in ("---", "...", "HeapProfileRecords:"):
            continue
        m = re.match(r"-?\s*GUID:\s*(\S+)$", s)
        if m:
            rec = recs.setdefault(_yaml_int(m.group(1)), {"allocs": [], "calls": []})
            where = None
            continue
        if s in ("AllocSites:", "CallSites:"):
            where = s
            continue
        if s in ("- Callstack:", "- Frames:"):
            site = {"stack": [], "mib": {}}
            if s == "- Callstack:":
                rec["allocs"].append(site)
            else:
                rec["calls"].append(site)
            continue
        m = _FRAME_RE.search(s)
        if m and site is not None:
            site["stack"].append((_yaml_int(m.group(1)), int(m.group(2)),
                                  int(m.group(3)), m.group(4) == "true"))
            continue
        m = re.match(r"(\w+):\s*(\d+)$", s)
        if m and site is not None and where == "AllocSites:":
            site["mib"][m.group(1)] = int(m.group(2))
    out = {}
    for g, r in recs.items():
        out[g] = {"allocs": [(tuple(a["stack"]), a["mib"]) for a in r["allocs"]],
                  "calls": [tuple(c["stack"]) for c in r["calls"]]}
    return out


def yaml_contexts(recs, fields=None):
    """{(record guid, stack): mib} over all alloc sites; `fields` limits the
    MIB fields kept.  Raises if a record lists one stack twice."""
    ctx = {}
    for g, r in recs.items():
        for stack, mib in r["allocs"]:
            key = (g, stack)
            if key in ctx:
                raise AssertionError(f"record {g:#x} lists stack {stack} twice")
            ctx[key] = {k: v for k, v in mib.items() if fields is None or k in fields}
    return ctx


def yaml_callsites(recs):
    """{guid: set of call-site stacks}."""
    return {g: set(r["calls"]) for g, r in recs.items() if r["calls"]}


def leaf_alloc_counts(yaml_text, functions):
    """{function name: AllocCount summed over the contexts whose leaf frame
    is that (not inlined) function} for each of `functions`, from the
    memprof YAML that `memprof-profdata show` prints.  A context is listed
    under its leaf function's record (and under those of the frames
    inlined into it): counting it there counts it once."""
    guids = {llvm_guid(f): f for f in functions}
    counts = dict.fromkeys(functions, 0)
    for (guid, stack), mib in yaml_contexts(parse_memprof_yaml(yaml_text)).items():
        if guid == stack[0][0] and guid in guids:
            counts[guids[guid]] += mib["AllocCount"]
    return counts


def memprof_profdata(*args, check=True):
    """Run our memprof-profdata; returns CompletedProcess (text)."""
    return run([profdata_tool(), *map(str, args)], check=check)


def available_runtimes():
    """LLVM's runtime always; ours too once libmemprof.a is built.
    MEMPROF_TEST_RUNTIMES (comma-separated) overrides the choice."""
    if os.environ.get("MEMPROF_TEST_RUNTIMES"):
        return os.environ["MEMPROF_TEST_RUNTIMES"].split(",")
    try:
        find_built("libmemprof.a")
        return ["llvm", "ours"]
    except FileNotFoundError:
        return ["llvm"]


def gnu_build_id(path):
    """The GNU build id of an ELF file as lowercase hex (via readelf)."""
    r = run(["readelf", "-n", path])
    m = re.search(r"Build ID:\s*([0-9a-fA-F]+)", r.stdout)
    if not m:
        raise AssertionError(f"{path} has no build id")
    return m.group(1).lower()


def use_ir(scratch, src, profile, out, llvm=22, extra=()):
    """Compile `src` with -fmemory-profile-use=`profile` to LLVM IR text and
    return it without the lines that name files (ModuleID, source_filename)."""
    cxx = f"clang++-{llvm}"
    ll = scratch.path(out)
    run([cxx, "-O2", "-gmlt", "-fdebug-info-for-profiling",
         f"-fmemory-profile-use={profile}", "-mllvm",
         "-memprof-ave-lifetime-cold-threshold=1", *extra, "-S", "-emit-llvm",
         src, "-o", ll])
    with open(ll) as f:
        lines = [l for l in f.read().splitlines()
                 if not l.startswith(("; ModuleID", "source_filename"))]
    return "\n".join(lines) + "\n"
