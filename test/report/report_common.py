"""report_common.py - what the report tests share: the multi-context test
program (progs/multi.cc) built with clang-22 -fmemory-profile and our
runtime, run once, its raw profile merged into an indexed file (with every
MIB field, so access counts are there), and the ground truth read back with
llvm-profdata-22; plus running `memprof-profdata report` and the external
consumers (a test whose consumer is missing is skipped, visibly)."""
import glob
import os
import shutil
import subprocess
import tempfile

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
MULTI = os.path.join(HERE, "progs", "multi.cc")
INLINE_SPLIT = os.path.join(HERE, "progs", "inline_split.cc")
DEEP_TRIE = os.path.join(HERE, "progs", "deep_trie.cc")
MERGED = os.path.join(HERE, "progs", "merged.cc")
CONTAINERS = os.path.join(HERE, "progs", "containers.cc")
HOTCOLD = os.path.join(harness.ROOT, "examples", "hotcold", "hotcold.cc")

# The programs' printf allocates its stdout buffer inside libc; unwound by
# the tables, that context's leaf frame is the printf call, which clang
# does not mark, and which the report tells apart from the raw profile
# and from our merged file (docs/memprof-profdata.md, "report";
# install/test_demo and test_report_verdicts check it).  These tests'
# programs are walked by frame pointers, so that context does not arise.
FP_ONLY = {"MEMPROF_OPTIONS": "unwind_tables=0"}


class Profiled:
    """A program profiled once: exe, raw profiles, indexed file and the
    contexts llvm-profdata-22 reads from that file."""

    def __init__(self, scratch, src, full_schema=True, opt="-O1"):
        self.scratch = scratch
        self.src = src
        self.exe = harness.compile_program(scratch, src, out="prog", opt=opt)
        _, self.raws = harness.run_program(scratch, self.exe, env=FP_ONLY)
        self.indexed = scratch.path("prog.memprofdata")
        harness.memprof_profdata("merge", *self.raws, f"--profiled-binary={self.exe}",
                                 *(["--memprof-full-schema"] if full_schema else []),
                                 "-o", self.indexed)
        shown = harness.run(["llvm-profdata-22", "show", "--memory", self.indexed]).stdout
        self.contexts = unique_contexts(harness.parse_memprof_yaml(shown))


def unique_contexts(recs):
    """{stack: mib} over all records: an inlined allocation is listed under
    each inline parent with the same MIB."""
    out = {}
    for r in recs.values():
        for stack, mib in r["allocs"]:
            out[stack] = mib
    return out


def report(*args, check=True):
    return harness.memprof_profdata("report", *args, check=check)


def clang_use_ir(scratch, src, profile, mllvm=(), name="use.ll"):
    """The IR clang-22 -O2 -fmemory-profile-use makes of `src`."""
    out = scratch.path(name)
    flags = [x for o in mllvm for x in ("-mllvm", o)]
    harness.run(["clang++-22", "-O2", "-gmlt", "-fdebug-info-for-profiling",
                 f"-fmemory-profile-use={profile}", *flags, "-S", "-emit-llvm",
                 src, "-o", out])
    with open(out) as f:
        return f.read()


def chromium():
    """Debian's chromium, or None."""
    return shutil.which("chromium")


def chromium_run(args, timeout=120):
    """Headless Chromium; returns CompletedProcess (stdout: e.g. --dump-dom,
    stderr: its log with the page's console messages)."""
    profile = tempfile.mkdtemp(prefix="memprof-chromium-")
    cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
           "--no-first-run", "--enable-logging=stderr", "--v=0",
           "--user-data-dir=" + profile, *args]
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def dh_view_js():
    """valgrind's dh_view.js, or None."""
    hits = glob.glob("/usr/libexec/valgrind/dh_view.js") + glob.glob("/usr/lib/*/valgrind/dh_view.js")
    return hits[0] if hits else None


def dh_view_page(scratch, data):
    """A page that shows DHAT JSON `data` with dh_view.js as dh_view.html
    does once a file is loaded; returns its path."""
    return scratch.write("dh.html", f"""<!DOCTYPE html><html><head><meta charset="UTF-8">
<script src="file://{dh_view_js()}"></script></head><body>
<script id="d" type="application/json">{data}</script>
<script>
window.addEventListener("load", () => {{
  onLoad();
  gFilename = "report.json";
  gData = JSON.parse(document.getElementById("d").textContent);
  buildTree();
  displayTree();
}});
</script></body></html>""")


def console_lines(log):
    """The page's console messages in Chromium's log.  Chromium logs them
    all at INFO, errors and uncaught exceptions too ("Uncaught Error: ..."),
    so a page that logs nothing must leave none."""
    return [l for l in log.splitlines() if ":CONSOLE" in l]


class MultiTest(harness.ProfTest):
    """A TestCase with progs/multi.cc profiled once for the class
    (cls.multi); FULL_SCHEMA says how its indexed file is merged."""
    FULL_SCHEMA = True

    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("report-" + cls.__name__.lower())
        cls.multi = Profiled(cls.shared, MULTI, full_schema=cls.FULL_SCHEMA)
        cls.ctx = cls.multi.contexts

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    def total(self, field):
        """The profile's total of one MIB field, over its contexts."""
        return sum(m[field] for m in self.ctx.values())
