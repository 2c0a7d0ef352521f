"""`memprof-profdata report` on programs without debug information: frames
are named from the ELF symbol table (.symtab, else .dynsym) with no
location ("?"), else "module+0xADDR"; the summary says how many contexts
and frames were named so; the process's libraries are found by build id.
merge and show still refuse such a profile, as llvm-profdata-22 does.

progs/symtab.c, built without -g (and a -g build stripped with
--strip-debug, and a copy stripped of everything but .dynsym), runs with
libmemprof.so preloaded; a real Debian program (xz) too.  Without
--profiled-binary the report finds the modules by the paths the runtime
recorded, and names a module whose file is gone module+0xADDR."""
import gzip
import os
import re
import shutil

import harness
import report_common as rc

SRC = os.path.join(rc.HERE, "progs", "symtab.c")
BASE_FLAGS = ["-O0", "-fno-omit-frame-pointer",
              "-Wl,--export-dynamic-symbol=exported_alloc"]
REFUSAL = ("none of the 3 allocation contexts has a symbolizable frame "
           "(do the profiled binaries have debug info?)")


def build(scratch, name, flags=(), strip=None):
    exe = scratch.path(name)
    harness.run(["clang-22", *BASE_FLAGS, *flags, SRC, "-o", exe])
    if strip:
        harness.run(["strip", strip, exe])
    return exe


def preload_run(scratch, exe, args=(), env=None):
    e = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
    e.update(env or {})
    _, raws = harness.run_program(scratch, exe, args=args, env=e)
    raws = [r for r in raws if not r.endswith(".timeline")]
    assert len(raws) == 1, raws
    return raws[0]


def functions(exe):
    """{name: (start, end)} of the defined functions, from nm -S."""
    out = {}
    for line in harness.run(["nm", "-S", exe]).stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT":
            start = int(f[0], 16)
            out[f[3]] = (start, start + int(f[1], 16))
    return out


def contexts(text):
    """The top-contexts table: [(bytes, [(name, loc), ...])], frames leaf
    first."""
    table = text.split("contexts by bytes\n", 1)[1].split("\n\n", 1)[0]
    out = []
    for line in table.splitlines()[1:]:
        m = re.match(r"^\s+\d+\s+[\d.]+ \S+\s+[\d.]+%", line)
        if m:
            out.append((line.split()[1] + " " + line.split()[2], []))
        else:
            name, loc = line.strip().rsplit(None, 1)
            out[-1][1].append((name.strip(), loc))
    return out


def program_frames(stack, module):
    """The frames of a stack up to the first one that is not the program's
    (libc's frames depend on whether libc6-dbg is installed)."""
    out = []
    for name, loc in stack:
        if name.startswith("__libc") or name.startswith("libc.so"):
            break
        out.append((name, loc))
    return out


class SymtabReport(harness.ProfTest):
    def report_of(self, exe, *args):
        raw = preload_run(self.scratch, exe)
        r = rc.report(f"--profiled-binary={exe}", raw, *args)
        return raw, r

    def check_named(self, exe):
        raw, r = self.report_of(exe)
        ctx = contexts(r.stdout)
        self.assertEqual([c[0] for c in ctx], ["3.00 MiB", "2.00 MiB", "1.00 MiB"])
        self.assertEqual(program_frames(ctx[0][1], exe),
                         [("exported_alloc", "?"), ("main", "?")])
        self.assertEqual(program_frames(ctx[1][1], exe),
                         [("local_alloc", "?"), ("twice_removed", "?"), ("main", "?")])
        self.assertEqual(program_frames(ctx[2][1], exe),
                         [("local_alloc", "?"), ("main", "?")])
        m = re.search(r"^  no debug info +(\d+) of 3 contexts have frames named "
                      r"from ELF symbol tables \((\d+) frames", r.stdout, re.M)
        self.assertIsNotNone(m, r.stdout)
        self.assertEqual(m.group(1), "3")
        # a frame without a location is its function: main is one frame;
        # _start, below libc's start (the preloaded runtime unwinds a
        # program without instrumented code by the tables), is each
        # stack's outermost frame, which the count leaves out
        self.assertEqual(m.group(2), "4")
        return raw

    def test_no_debug_info(self):
        exe = build(self.scratch, "nodebug")
        raw = self.check_named(exe)
        # a preloaded profile: merge keeps every context, named as report
        # names them
        merged = self.scratch.path("out")
        harness.memprof_profdata("merge", f"--profiled-binary={exe}", raw,
                                 "-o", merged)
        self.assertEqual(contexts(rc.report(merged).stdout),
                         contexts(rc.report(f"--profiled-binary={exe}", raw).stdout))

    def test_instrumented_no_debug_info(self):
        """An instrumented program's profile without debug information is
        refused by merge and show, as llvm-profdata-22 refuses it."""
        exe = harness.compile_program(self.scratch, SRC, out="instr_nodebug",
                                      cflags=["-g0"])
        _, raws = harness.run_program(self.scratch, exe)
        raw = [r for r in raws if not r.endswith(".timeline")][0]
        for cmd in ("merge", "show"):
            r = harness.memprof_profdata(cmd, f"--profiled-binary={exe}", raw,
                                         "-o", self.scratch.path("out"), check=False)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stderr, f"memprof-profdata: error: {raw}: {REFUSAL}\n")

    def test_strip_debug(self):
        self.check_named(build(self.scratch, "stripdbg", ["-g"], "--strip-debug"))

    def test_dynsym_only(self):
        exe = build(self.scratch, "stripped", strip="--strip-all")
        funcs = functions(build(self.scratch, "unstripped"))
        raw, r = self.report_of(exe)
        ctx = contexts(r.stdout)
        self.assertEqual([c[0] for c in ctx], ["3.00 MiB", "2.00 MiB", "1.00 MiB"])

        def where(frame):
            m = re.fullmatch(r"stripped\+0x([0-9a-f]+)", frame[0])
            self.assertIsNotNone(m, frame)
            self.assertEqual(frame[1], "?")
            a = int(m.group(1), 16)
            return [n for n, (lo, hi) in funcs.items() if lo < a <= hi]

        f0 = program_frames(ctx[0][1], exe)
        self.assertEqual(f0[0], ("exported_alloc", "?"))  # .dynsym names it
        self.assertEqual([where(f) for f in f0[1:]], [["main"]])
        self.assertEqual([where(f) for f in program_frames(ctx[1][1], exe)],
                         [["local_alloc"], ["twice_removed"], ["main"]])
        self.assertEqual([where(f) for f in program_frames(ctx[2][1], exe)],
                         [["local_alloc"], ["main"]])

    def test_debug_info_unchanged(self):
        exe = build(self.scratch, "dbg", ["-g"])
        _, r = self.report_of(exe)
        self.assertNotIn("no debug info", r.stdout)
        ctx = contexts(r.stdout)
        self.assertEqual(ctx[0][1][0][0], "exported_alloc")
        self.assertRegex(ctx[0][1][0][1], r"symtab\.c:10:\d+$")

    def test_partial_debug_info(self):
        """A program of which one object has debug information: the module
        has DWARF, but not for the functions that allocate, which are
        named from the symbol table as in a program without any."""
        part = self.scratch.path("part.c")
        with open(part, "w") as f:
            f.write("int debug_part(int x) { return x + 1; }\n")
        obj = self.scratch.path("part.o")
        harness.run(["clang-22", "-g", "-O0", "-c", part, "-o", obj])
        self.check_named(build(self.scratch, "partdbg", [obj]))

    def test_text_in_two_segments(self):
        """Frames of code in a second executable PT_LOAD (progs/split_text.c)
        are those of their own segment, found from the load bias, with or
        without debug information and without --profiled-binary."""
        src = os.path.join(rc.HERE, "progs", "split_text.c")
        script = os.path.join(rc.HERE, "progs", "split_text.ld")
        for debug in ("-g", "-g0"):
            with self.subTest(debug=debug):
                exe = self.scratch.path("split" + debug)
                harness.run(["clang-22", "-O0", "-fno-omit-frame-pointer", debug, src,
                             f"-Wl,-T,{script}", "-o", exe])
                loads = [l for l in harness.run(["readelf", "-lW", exe]).stdout.splitlines()
                         if l.split()[:1] == ["LOAD"] and "E" in l.split()[-2]]
                self.assertEqual(len(loads), 2, loads)
                raw = preload_run(self.scratch, exe)
                ctx = contexts(rc.report(raw).stdout)
                self.assertEqual([c[0] for c in ctx[:2]], ["3.00 MiB", "2.00 MiB"])
                far, near = (program_frames(c[1], exe) for c in ctx[:2])
                self.assertEqual([n for n, _ in far], ["far_alloc", "main"])
                self.assertEqual([n for n, _ in near], ["near_alloc", "main"])
                if debug == "-g":
                    self.assertRegex(far[0][1], r"split_text\.c:10:\d+$")
                    self.assertRegex(far[1][1], r"split_text\.c:22:\d+$")
                    self.assertRegex(near[0][1], r"split_text\.c:16:\d+$")
                else:
                    self.assertEqual({loc for _, loc in far + near}, {"?"})

    def test_other_formats(self):
        exe = build(self.scratch, "nodebug")
        raw = preload_run(self.scratch, exe)
        r = rc.report(f"--profiled-binary={exe}", raw, "--format=folded")
        self.assertRegex(r.stdout, r"(^|;)main;exported_alloc 3145728$".replace("$", "\n"))
        self.assertRegex(r.stdout, r"(^|;)main;twice_removed;local_alloc 2097152\n")
        self.assertIn("memprof-profdata: note: 3 of 3 contexts have frames named "
                      "from ELF symbol tables", r.stderr)
        for fmt in ("pprof", "dhat", "speedscope", "html"):
            with self.subTest(fmt=fmt):
                r = rc.report(f"--profiled-binary={exe}", raw, f"--format={fmt}",
                              "-o", self.scratch.path("out." + fmt))
                self.assertIn("contexts have frames named from ELF symbol tables",
                              r.stderr)
                with open(self.scratch.path("out." + fmt), "rb") as f:
                    data = f.read()
                if fmt == "pprof":
                    data = gzip.decompress(data)
                self.assertIn(b"twice_removed", data)


LIB_SRC = """#include <stdlib.h>
#include <string.h>
void *hidden_alloc(size_t n) {
  void *p = malloc(n);
  memset(p, 3, n);
  return p;
}
"""
LIB_MAIN = """#include <stdlib.h>
void *hidden_alloc(size_t n);
int main(void) {
  free(hidden_alloc(5 << 20));
  return 0;
}
"""


def callstacks(yaml_text):
    """The sorted alloc-site call stacks of show's YAML, each a tuple of its
    frame lines."""
    stacks, cur = [], None
    for line in yaml_text.splitlines():
        if line.strip() == "- Callstack:":
            cur = []
        elif cur is not None and line.strip().startswith("- { Function:"):
            cur.append(line.strip())
        elif cur is not None:
            stacks.append(tuple(cur))
            cur = None
    return sorted(stacks)


class NoProfiledBinary(harness.ProfTest):
    """Without --profiled-binary, a preloaded program's report finds its
    modules where the process loaded them (the note's paths,
    docs/raw-format.md section 7), and names a module whose file is gone
    module+0xADDR: no frame is dropped and no contexts merge."""

    def test_same_frames_as_given(self):
        exe = build(self.scratch, "nodebug")
        raw = preload_run(self.scratch, exe)
        given = contexts(rc.report(f"--profiled-binary={exe}", raw).stdout)
        alone = contexts(rc.report(raw).stdout)
        self.assertEqual(alone, given)
        self.assertEqual(program_frames(alone[1][1], exe),
                         [("local_alloc", "?"), ("twice_removed", "?"), ("main", "?")])

    def test_merge_and_show_without_binary(self):
        """merge and show find the modules too; the merged file keeps every
        context and gives the raw profile's report, its temporary
        allocations too."""
        exe = build(self.scratch, "nodebug_merge")
        raw = preload_run(self.scratch, exe)
        merged = self.scratch.path("m.memprofdata")
        harness.memprof_profdata("merge", raw, "-o", merged)
        want = rc.report(raw).stdout
        got = rc.report(merged).stdout
        self.assertEqual(contexts(got), contexts(want))
        self.assertIn("\nTemporary allocations", want)
        self.assertEqual(got.split("\nTemporary allocations")[1],
                         want.split("\nTemporary allocations")[1])
        stacks = callstacks(harness.memprof_profdata("show", raw).stdout)
        self.assertEqual(stacks,
                         callstacks(harness.memprof_profdata("show", merged).stdout))
        self.assertGreaterEqual(len(stacks), 3)

    def test_program_gone(self):
        exe = build(self.scratch, "gone", strip="--strip-all")
        funcs = functions(build(self.scratch, "unstripped"))
        raw = preload_run(self.scratch, exe)
        os.unlink(exe)
        r = rc.report(raw)
        ctx = contexts(r.stdout)
        # three contexts still: none merged for lack of its program's frames
        self.assertEqual([c[0] for c in ctx], ["3.00 MiB", "2.00 MiB", "1.00 MiB"])

        def where(frame):
            m = re.fullmatch(r"gone\+0x([0-9a-f]+)", frame[0])
            self.assertIsNotNone(m, frame)
            a = int(m.group(1), 16)
            return [n for n, (lo, hi) in funcs.items() if lo < a <= hi]

        self.assertEqual([where(f) for f in program_frames(ctx[0][1], exe)],
                         [["exported_alloc"], ["main"]])
        self.assertEqual([where(f) for f in program_frames(ctx[1][1], exe)],
                         [["local_alloc"], ["twice_removed"], ["main"]])

    def test_library_outside_search_path(self):
        libdir = self.scratch.path("private")
        os.makedirs(libdir)
        lib_c, main_c = self.scratch.path("hid.c"), self.scratch.path("main.c")
        with open(lib_c, "w") as f:
            f.write(LIB_SRC)
        with open(main_c, "w") as f:
            f.write(LIB_MAIN)
        harness.run(["clang-22", "-g", "-O0", "-fPIC", "-shared", lib_c, "-o",
                     os.path.join(libdir, "libhid.so")])
        exe = self.scratch.path("uses_hid")
        harness.run(["clang-22", "-g", "-O0", "-fno-omit-frame-pointer", main_c,
                     f"-L{libdir}", "-lhid", "-o", exe])
        raw = preload_run(self.scratch, exe, env={"LD_LIBRARY_PATH": libdir})
        r = rc.report(raw)  # no LD_LIBRARY_PATH here
        top = contexts(r.stdout)[0]
        self.assertEqual(top[0], "5.00 MiB")
        self.assertEqual(top[1][0][0], "hidden_alloc")
        self.assertRegex(top[1][0][1], r"hid\.c:4:\d+$")
        self.assertEqual(top[1][1][0], "main")
        self.assertRegex(top[1][1][1], r"main\.c:4:\d+$")
        # the library gone: its frame is named, not dropped
        shutil.rmtree(libdir)
        top = contexts(rc.report(raw).stdout)[0]
        self.assertRegex(top[1][0][0], r"^libhid\.so\+0x[0-9a-f]+$")
        self.assertEqual(top[1][1][0], "main")


class SystemProgram(harness.ProfTest):
    """xz from Debian, no debug information installed for it or liblzma:
    liblzma is found by build id and its exported functions named."""

    def test_xz(self):
        xz = shutil.which("xz")
        if not xz:
            self.skipTest("xz is not installed")
        blob = self.scratch.path("blob")
        with open(blob, "wb") as f:
            f.write(bytes(range(256)) * 8192)
        raw = preload_run(self.scratch, xz, ["-6", "-k", "-f", blob])
        r = rc.report(f"--profiled-binary={xz}", raw, "--top=3")
        top = contexts(r.stdout)[0][1]
        names = [n for n, _ in top]
        ours = [(n, l) for n, l in top if re.match(r"lzma_|liblzma|xz\+", n)]
        self.assertTrue(all(loc == "?" for _, loc in ours), top)
        self.assertTrue(any(n in ("lzma_stream_encoder", "lzma_easy_encoder",
                                  "lzma_raw_encoder", "lzma_code") for n in names),
                        names)
        self.assertTrue(any(re.fullmatch(r"xz\+0x[0-9a-f]+", n) for n in names), names)
        self.assertTrue(any(re.fullmatch(r"liblzma\.so\.5\+0x[0-9a-f]+", n)
                            for n in names), names)
        every = [n for _, st in contexts(r.stdout) for n, _ in st]
        self.assertFalse([n for n in every if "libmemprof" in n or n.startswith("rt_")])
        self.assertRegex(r.stdout, r"no debug info +\d+ of \d+ contexts")
        # without --profiled-binary: xz found where it ran, the same frames,
        # in the report of the raw profile and of the merged one
        self.assertEqual(contexts(rc.report(raw, "--top=3").stdout), contexts(r.stdout))
        merged = self.scratch.path("x.prof")
        harness.memprof_profdata("merge", raw, "-o", merged)
        self.assertEqual(contexts(rc.report(merged, "--top=3").stdout), contexts(r.stdout))


if __name__ == "__main__":
    harness.main()
