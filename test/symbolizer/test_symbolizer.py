"""The symbolizer (symbolizer/, via memprof-symtool) equals LLVM's DWARF
symbolizer in the mode llvm-profdata uses for MemProf.

Ground truth: `llvm-symbolizer-22 --inlining --functions=linkage
--no-demangle --output-style=JSON` on a copy of the binary without .symtab
(RawMemProfReader symbolizes with UseSymbolTable=false; llvm-symbolizer
would otherwise rename the outermost frame after the ELF symbol).  For
EVERY instruction address in .text of each test program we assert that
the frames (count, names, files, lines, columns, discriminators, decl
lines) are identical, and that addresses without DWARF give no frames.

The matrix: clang-22 and clang-19; -O0 and -O2; -g (DWARF 5 and 4) and
-gmlt -fdebug-info-for-profiling; C with always_inline chains over two
files, C++ with namespaces, templates, methods, lambdas and COMDAT
functions defined in two translation units; an executable (PIE and
non-PIE) and a shared library; ld.bfd and ld.lld with --gc-sections;
relative comp dirs; GCC's libc with its libc6-dbg file.  Then separate
debug files (debuglink in three places, build-id directory), compressed
debug sections, and the module facts and errors.

test_frames_equal_llvm_profdata closes the loop with llvm-profdata-22
itself: alloc-site stacks from a real raw profile.
"""
import json
import os
import re
import shutil
import struct
import subprocess

import harness

# The programs, in progs/ (copied into the scratch folder to be built there):
# C with always_inline chains over two files, C++ over two translation units
# sharing COMDAT functions, and a shared library.
HEADERS = ["inline_chains.h", "cxx_linkage.h"]
C_SRCS = ["inline_chains.c"]
CXX_SRCS = ["cxx_linkage.cc", "cxx_linkage_other.cc"]
SO_SRCS = ["cxx_linkage_so.cc"]

DEBUG_FLAVOURS = {
    "g5": ["-g"],
    "g4": ["-g", "-gdwarf-4"],
    "gmlt": ["-gmlt", "-fdebug-info-for-profiling"],
}


def symtool():
    return harness.find_built("memprof-symtool")


def text_addresses(binary):
    """Every instruction address in .text, from objdump."""
    out = harness.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text",
                       binary]).stdout
    return [int(m.group(1), 16) for m in
            re.finditer(r"^\s+([0-9a-f]+):\t", out, re.M)]


def ours(binary, addrs, debug_dirs=()):
    cmd = [symtool()]
    for d in debug_dirs:
        cmd += ["-d", d]
    r = subprocess.run(cmd + [binary], input="\n".join(hex(a) for a in addrs),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        raise AssertionError(f"memprof-symtool failed: {r.stderr}")
    res = {}
    for line in r.stdout.splitlines():
        o = json.loads(line)
        res[int(o["addr"], 16)] = [
            (f["name"], f["file"] or "", f["line"], f["column"],
             f["discriminator"], f["decl_line"]) for f in o["frames"]]
    return res


def llvm_truth(scratch, binary, addrs):
    """LLVM's frames per address; [] where no DWARF function covers it."""
    nosym = scratch.path(os.path.basename(binary) + ".nosym")
    harness.run(["llvm-objcopy-22", "--remove-section=.symtab",
                 "--remove-section=.strtab", binary, nosym])
    r = harness.run(["llvm-symbolizer-22", "--inlining", "--functions=linkage",
                     "--no-demangle", "--output-style=JSON", f"--obj={nosym}"],
                    input="\n".join(hex(a) for a in addrs))
    res = {}
    for line in r.stdout.splitlines():
        for o in json.loads(line) if line.startswith("[") else [json.loads(line)]:
            frames = [(s["FunctionName"], s["FileName"], s["Line"], s["Column"],
                       s["Discriminator"], s["StartLine"]) for s in o["Symbol"]]
            if frames and frames[0][0] in ("", "??", "<invalid>"):
                frames = []
            res[int(o["Address"], 16)] = frames
    return res


RUNTIME_FILES = {"memprof_malloc_linux.cpp", "memprof_interceptors.cpp",
                 "memprof_new_delete.cpp"}


def raw_stacks(raw):
    """(segments, {stack id: [pc]}) of the first
    dump of a raw profile (layout: docs/raw-format.md)."""
    with open(raw, "rb") as f:
        data = f.read()
    _, ver, _, segoff, miboff, stkoff = struct.unpack_from("<6Q", data, 0)
    (nseg,) = struct.unpack_from("<Q", data, segoff)
    segs = []
    for i in range(nseg):
        p = segoff + 8 + 64 * i
        start, end, _, bsz = struct.unpack_from("<4Q", data, p)
        segs.append((start, end, data[p + 32:p + 32 + bsz].hex()))
    (nmib,) = struct.unpack_from("<Q", data, miboff)
    assert nmib > 0 and ver in (3, 4, 5), (nmib, ver)
    (nst,) = struct.unpack_from("<Q", data, stkoff)
    p = stkoff + 8
    stacks = {}
    for _ in range(nst):
        sid, n = struct.unpack_from("<2Q", data, p)
        stacks[sid] = list(struct.unpack_from(f"<{n}Q", data, p + 16))
        p += 16 + 8 * n
    return segs, stacks


def expected_sites(binary, raw):
    """The alloc-site call stacks llvm-profdata should print, computed from
    our frames by docs/symbolization.md's rules (translation, drop rules,
    LineOffset = u32(line - decl_line), Inline = not last frame)."""
    segs, stacks = raw_stacks(raw)
    info = json.loads(harness.run([symtool(), "--info", binary]).stdout)
    (start, end, _), = [s for s in segs if s[2] == info["build_id"]]
    def vaddr(pc):
        return pc - start + info["exec_vaddr"] if start < pc <= end else pc
    pcs = sorted({vaddr(pc) for st in stacks.values() for pc in st})
    frames = ours(binary, pcs)
    sites = set()
    for st in stacks.values():
        out = []
        for pc in st:
            fr = frames[vaddr(pc)]
            if not fr or os.path.basename(fr[0][1]) in RUNTIME_FILES:
                continue
            out += [(f[0], (f[2] - f[5]) & 0xffffffff, f[3], int(i != len(fr) - 1))
                    for i, f in enumerate(fr)]
        if out:
            sites.add(tuple(out))
    return sites


class SymbolizerTest(harness.ProfTest):

    def test_frames_equal_llvm_profdata(self):
        """The real ground truth: run a -fmemory-profile program with LLVM's
        runtime; the alloc-site stacks `llvm-profdata-22 show --memory`
        prints equal those we derive from the raw PCs with our frames."""
        inlined = 0
        for opt in ("-O0", "-O2"):
            for name, srcs in (("c", C_SRCS), ("cxx", CXX_SRCS)):
                with self.subTest(opt=opt, lang=name):
                    cc = "clang-22" if name == "c" else "clang++-22"
                    exe = self.build(srcs, cc, [opt, *harness.PROFILE_FLAGS],
                                     f"mp-{name}{opt}")
                    _, raws = harness.run_program(self.scratch, exe)
                    self.assertEqual(len(raws), 1)
                    want = {tuple(s["stack"]) for s in harness.llvm_show_raw(raws[0], exe)}
                    got = expected_sites(exe, raws[0])
                    self.assertGreaterEqual(len(want), 1)
                    self.assertEqual(got, want)
                    inlined += sum(f[3] for st in want for f in st)
                    os.remove(raws[0])
        self.assertGreater(inlined, 10)

    def assert_same_as_llvm(self, binary, debug_dirs=(), truth_binary=None,
                            normalize_paths=False):
        addrs = text_addresses(truth_binary or binary)
        self.assertGreater(len(addrs), 20)
        want = llvm_truth(self.scratch, truth_binary or binary, addrs)
        got = ours(binary, addrs, debug_dirs)
        if normalize_paths:
            for d in (want, got):
                for a in d:
                    d[a] = [(f[0], os.path.normpath(f[1]), *f[2:]) for f in d[a]]
        bad = [(hex(a), got.get(a), want.get(a)) for a in addrs
               if got.get(a) != want.get(a)]
        self.assertEqual(bad[:5], [], f"{len(bad)} of {len(addrs)} addresses differ")
        # The programs have inline chains: make sure they were exercised.
        self.assertGreaterEqual(max(len(f) for f in got.values()), 2)
        return got

    def copy_progs(self, names):
        """Copy progs/`names` into the scratch folder; returns their paths."""
        paths = [self.scratch.path(n) for n in names]
        for name, path in zip(names, paths):
            shutil.copyfile(harness.prog_path(__file__, name), path)
        return paths

    def build(self, srcs, cc, flags, out, link=(), relative=False):
        """Compile progs/`srcs` in the scratch folder; relative=True names
        the sources relatively (with -fdebug-compilation-dir=. no path is
        absolute)."""
        self.copy_progs(HEADERS)
        paths = self.copy_progs(srcs)
        if relative:
            paths = [os.path.basename(p) for p in paths]
        exe = self.scratch.path(out)
        harness.run([cc, *flags, "-I", "." if relative else self.scratch.dir,
                     *paths, "-o", exe, *link], cwd=self.scratch.dir)
        return exe

    def matrix(self, srcs, lang, extra=(), out="prog"):
        for llvm in (22, 19):
            cc = f"clang-{llvm}" if lang == "c" else f"clang++-{llvm}"
            for opt in ("-O0", "-O2"):
                for flav, dflags in DEBUG_FLAVOURS.items():
                    with self.subTest(llvm=llvm, opt=opt, debug=flav):
                        exe = self.build(srcs, cc, [opt, *dflags, *extra],
                                         f"{out}-{llvm}{opt}{flav}")
                        self.assert_same_as_llvm(exe)

    def test_c_inline_chains_match_llvm(self):
        """C: always_inline 3 deep, a header inlinee (call_file != file)."""
        self.matrix(C_SRCS, "c")

    def test_c_non_pie_matches_llvm(self):
        exe = self.build(C_SRCS, "clang-22", ["-O2", "-g", "-no-pie"],
                         "nopie")
        self.assert_same_as_llvm(exe)
        info = self.info(exe)
        self.assertEqual(info["exec_vaddr"], 0x401000)

    def test_cxx_linkage_names_match_llvm(self):
        """C++: namespaces, templates, lambdas, COMDAT in two TUs."""
        self.matrix(CXX_SRCS, "c++")
        got = ours(self.scratch.path("prog-22-O0g5"),
                   text_addresses(self.scratch.path("prog-22-O0g5")))
        names = {f[0] for fr in got.values() for f in fr}
        self.assertIn("_ZN5outer5inner4growILi3EEEPvRSt6vectorIiSaIiEE", names)
        self.assertIn("_ZN5outer5inner3BoxIcE11make_staticEj", names)

    def test_gc_sections_and_lld_match_llvm(self):
        """Discarded functions (--gc-sections, COMDAT) leave DWARF with
        tombstoned or zero addresses: ld.bfd and ld.lld, DWARF 5 and 4."""
        unused = self.scratch.write("u.c", "__attribute__((noinline)) void *"
                                    "unused_fn(unsigned long n) {\n"
                                    "  return __builtin_malloc(n + 1);\n}\n")
        harness.run(["clang-22", "-O2", "-g", "-ffunction-sections", "-c", unused,
                     "-o", self.scratch.path("u.o")])
        for ld in ("bfd", "lld"):
            for dwarf in ("-gdwarf-5", "-gdwarf-4"):
                with self.subTest(ld=ld, dwarf=dwarf):
                    exe = self.build(CXX_SRCS,
                                     "clang++-22",
                                     ["-O2", "-g", dwarf, "-ffunction-sections",
                                      f"-fuse-ld={ld}", "-Wl,--gc-sections"],
                                     f"gc-{ld}{dwarf}", link=[self.scratch.path("u.o")])
                    self.assert_same_as_llvm(exe)
                    self.assertNotIn("unused_fn", harness.run(["nm", exe]).stdout)

    def test_shared_library_matches_llvm(self):
        for llvm in (22, 19):
            for opt in ("-O0", "-O2"):
                with self.subTest(llvm=llvm, opt=opt):
                    so = self.build(SO_SRCS, f"clang++-{llvm}",
                                    [opt, "-g", "-fPIC", "-shared"],
                                    f"lib{llvm}{opt}.so")
                    self.assert_same_as_llvm(so)

    def test_relative_comp_dir_matches_llvm(self):
        """-fdebug-compilation-dir=. (as distro builds): LLVM prepends the
        relative comp dir to relative paths, libdw does not; we follow LLVM.
        Paths are compared after normpath: for a DWARF 5 file whose
        directory entry is spelled like entry 0 we cannot tell the two
        apart and print "./inline_chains.h" where LLVM prints
        "././inline_chains.h"."""
        for llvm in (22, 19):
            for dwarf in ("-gdwarf-5", "-gdwarf-4"):
                with self.subTest(llvm=llvm, dwarf=dwarf):
                    exe = self.build(C_SRCS, f"clang-{llvm}",
                                     ["-O2", "-g", dwarf, "-fdebug-compilation-dir=."],
                                     f"rel{llvm}{dwarf}", relative=True)
                    got = self.assert_same_as_llvm(exe, normalize_paths=True)
                    files = {f[1] for fr in got.values() for f in fr}
                    self.assertTrue(any(not f.startswith("/") for f in files), files)

    def test_split_dwarf_matches_llvm(self):
        """-gsplit-dwarf: the skeleton units in the binary give the address
        ranges and line tables, the .dwo files the functions and inline
        chains (DWARF 5 split units, DWARF 4 GNU ones), C and C++ over two
        translation units; compiled and linked in one step, as build systems
        without a separate link step do (clang names the .dwo after the
        output)."""
        for llvm in (22, 19):
            for opt in ("-O0", "-O2"):
                for dwarf in ("-gdwarf-5", "-gdwarf-4"):
                    for lang, srcs in (("c", C_SRCS), ("c++", CXX_SRCS)):
                        with self.subTest(llvm=llvm, opt=opt, dwarf=dwarf, lang=lang):
                            cc = f"clang-{llvm}" if lang == "c" else f"clang++-{llvm}"
                            out = f"split-{lang}-{llvm}{opt}{dwarf}"
                            exe = self.build(srcs, cc, [opt, "-g", dwarf, "-gsplit-dwarf"], out)
                            dwos = [f for f in os.listdir(self.scratch.dir)
                                    if f.startswith(out + "-") and f.endswith(".dwo")]
                            self.assertEqual(len(dwos), len(srcs), dwos)
                            self.assertFalse(harness.run(["readelf", "-S", exe]).stdout.count(
                                ".debug_info.dwo"))
                            self.assert_same_as_llvm(exe)

    def test_split_dwarf_missing_dwo(self):
        """A .dwo that is gone: its unit's code gets no frames (LLVM's
        symbolizer has no function name for it either), the other unit's
        code keeps its frames, and the module says which file is missing."""
        exe = self.build(CXX_SRCS, "clang++-22",
                         ["-O2", "-g", "-gsplit-dwarf"], "splitmiss")
        full = ours(exe, text_addresses(exe))
        gone = self.scratch.path("splitmiss-" + CXX_SRCS[1].replace(".cc", ".dwo"))
        os.rename(gone, gone + ".away")
        got = ours(exe, text_addresses(exe))
        lost = [a for a in got if full[a] and not got[a]]
        kept = [a for a in got if got[a]]
        self.assertTrue(lost and kept, (len(lost), len(kept)))
        self.assertEqual({a: got[a] for a in kept}, {a: full[a] for a in kept})
        info = self.info(exe)
        self.assertEqual(info["missing_split"], 1)
        self.assertEqual(info["first_missing_split"], gone)

    def test_dwz_supplementary_file(self):
        """dwz -m (as distro debug packages): strings and DIEs common to two
        programs move into a supplementary file named by .gnu_debugaltlink.
        Frames stay those of the program before dwz (which equal LLVM's), at
        the recorded path and by build id under a debug dir; without the
        file, adding the binary fails and names it."""
        if not shutil.which("dwz"):
            self.skipTest("dwz is not installed (scripts/setup.sh installs it)")
        exes = []
        for opt in ("-O0", "-O2"):
            exes.append(self.build(CXX_SRCS, "clang++-22",
                                   [opt, "-g", "-gdwarf-4"], f"dwz{opt}"))
        want = {}
        for exe in exes:
            shutil.copy(exe, exe + ".orig")
            want[exe] = self.assert_same_as_llvm(exe + ".orig")
        common = self.scratch.path("common.debug")
        harness.run(["dwz", "-m", common, "-M", common, *exes])
        for exe in exes:
            self.assertIn(".gnu_debugaltlink", harness.run(["readelf", "-S", exe]).stdout)
            self.assertEqual(ours(exe, text_addresses(exe)), want[exe])
        bid = harness.gnu_build_id(common)
        root = self.scratch.path("altroot")
        os.makedirs(os.path.join(root, ".build-id", bid[:2]))
        os.rename(common, os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug"))
        r = subprocess.run([symtool(), "--info", exes[1]], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"{exes[1]}: its DWARF was compressed with dwz and refers to the "
                      f"supplementary file {common} (build id {bid}), which was not found",
                      r.stderr)
        self.assertEqual(ours(exes[1], text_addresses(exes[1]), [root]), want[exes[1]])

    def test_libc_debug_package_matches_llvm(self):
        """GCC-built libc.so.6 with its libc6-dbg file found by build id in
        /usr/lib/debug (the default): every 8th .text instruction."""
        libc = "/lib/x86_64-linux-gnu/libc.so.6"
        info = self.info(libc) if os.path.exists(libc) else {}
        if not info.get("has_debug_info"):
            self.skipTest("libc6-dbg is not installed")
        self.assertTrue(info["debug_file"].startswith("/usr/lib/debug/.build-id/"))
        addrs = text_addresses(libc)[::8]
        want = llvm_truth(self.scratch, info["debug_file"], addrs)
        got = ours(libc, addrs)
        bad = [(hex(a), got.get(a), want.get(a)) for a in addrs
               if got.get(a) != want.get(a)]
        self.assertEqual(bad[:5], [], f"{len(bad)} of {len(addrs)} addresses differ")
        self.assertGreater(sum(1 for f in got.values() if len(f) > 1), 1000)

    # ---- module facts and errors ----

    def info(self, binary, debug_dirs=()):
        cmd = [symtool()]
        for d in debug_dirs:
            cmd += ["-d", d]
        return json.loads(harness.run(cmd + ["--info", binary]).stdout)

    def readelf_facts(self, binary):
        notes = harness.run(["readelf", "-n", binary]).stdout
        bid = re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)
        segs = harness.run(["readelf", "-lW", binary]).stdout
        execs = [(int(m.group(1), 16), int(m.group(2), 16)) for m in re.finditer(
            r"^\s+LOAD\s+\S+\s+(0x[0-9a-f]+)\s+\S+\s+\S+\s+(0x[0-9a-f]+)\s+R?\s?W?\s?E",
            segs, re.M)]
        return bid, execs

    def test_module_facts_match_readelf(self):
        exe = self.build(C_SRCS, "clang-22", ["-O2", "-g"], "pie")
        so = self.build(SO_SRCS, "clang++-22",
                        ["-O2", "-g", "-fPIC", "-shared"], "lib.so")
        for b in (exe, so):
            info = self.info(b)
            bid, execs = self.readelf_facts(b)
            self.assertEqual(info["build_id"], bid)
            self.assertEqual(info["num_exec_segments"], len(execs))
            self.assertEqual((info["exec_vaddr"], info["exec_memsz"]), execs[0])
            self.assertEqual(info["has_debug_info"], 1)
            self.assertEqual(info["debug_file"], b)

    def test_errors(self):
        tool = symtool()
        r = harness.run([tool, "--info", self.scratch.path("missing")], check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("missing: no such file", r.stderr)
        txt = self.scratch.write("notelf", "hello\n" * 20)
        r = harness.run([tool, "--info", txt], check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("notelf: not an ELF file", r.stderr)
        src = self.scratch.write("x.c", "int f(int x) { return x + 1; }\n")
        for target, obj in (("aarch64-linux-gnu", "arm.o"), ("i386-linux-gnu", "x86.o")):
            harness.run(["clang-22", f"--target={target}", "-c", src, "-o",
                         self.scratch.path(obj)])
            r = harness.run([tool, "--info", self.scratch.path(obj)], check=False)
            self.assertEqual(r.returncode, 1)
            self.assertIn(f"{obj}: unsupported target", r.stderr)

    def test_compressed_debug_sections(self):
        """-gz=zlib and -gz=zstd are both read, the latter even by a libdw
        that cannot (elfutils 0.188: sym_zstd.c decompresses the sections
        into a copy): frames equal LLVM's, also from a separate debug file
        that objcopy compressed with zstd.  A zstd section that does not
        decompress is refused with a message naming the file."""
        exe = self.build(C_SRCS, "clang-22", ["-O2", "-g", "-gz=zlib"],
                         "zlib")
        self.assert_same_as_llvm(exe)
        def debug_info_at(path):  # the file's bytes, .debug_info's offset
            with open(path, "rb") as f:
                data = bytearray(f.read())
            out = harness.run(["readelf", "-S", "-W", path]).stdout
            return data, int(re.search(r"\.debug_info\s+PROGBITS\s+[0-9a-f]+\s+"
                                       r"([0-9a-f]+)", out).group(1), 16)

        ELFCOMPRESS_ZSTD = 2
        exe = self.build(CXX_SRCS, "clang++-22",
                         ["-O2", "-g", "-gz=zstd"], "zstd")
        data, off = debug_info_at(exe)
        self.assertEqual(struct.unpack_from("<I", data, off)[0], ELFCOMPRESS_ZSTD)
        self.assert_same_as_llvm(exe)

        plain = self.build(C_SRCS, "clang-22", ["-O2", "-g"], "zstddbg")
        stripped, dbg = self.split(plain, debuglink=False)
        harness.run(["objcopy", "--compress-debug-sections=zstd", dbg])
        dbg_data, dbg_off = debug_info_at(dbg)
        self.assertEqual(struct.unpack_from("<I", dbg_data, dbg_off)[0], ELFCOMPRESS_ZSTD)
        bid = self.info(stripped)["build_id"]
        root = self.scratch.path("zroot")
        os.makedirs(os.path.join(root, ".build-id", bid[:2]))
        shutil.move(dbg, os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug"))
        self.assert_same_as_llvm(stripped, [root], truth_binary=plain)

        data[off + 24:off + 28] = b"XXXX"  # the zstd frame's magic number
        bad = self.scratch.path("zstd-bad")
        with open(bad, "wb") as f:
            f.write(data)
        r = harness.run([symtool(), "--info", bad], check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"{bad}: a zstd-compressed debug section does not decompress",
                      r.stderr)

    def test_no_debug_info_gives_no_frames(self):
        exe = self.build(C_SRCS, "clang-22", ["-O2"], "nodebug")
        self.assertEqual(self.info(exe)["has_debug_info"], 0)
        got = ours(exe, text_addresses(exe))
        self.assertEqual({len(f) for f in got.values()}, {0})

    def test_code_without_dwarf_gives_no_frames(self):
        """One TU with -g, one without: only the first is symbolized."""
        self.copy_progs(HEADERS)
        nodbg = self.scratch.write("nd.c", "__attribute__((noinline)) int nd(int x)"
                                   " { return x * 3 + 1; }\n")
        harness.run(["clang-22", "-O2", "-c", nodbg, "-o", self.scratch.path("nd.o")])
        exe = self.build(C_SRCS, "clang-22", ["-O2", "-g"], "mixed",
                         link=[self.scratch.path("nd.o")])
        got = self.assert_same_as_llvm(exe)
        nm = harness.run(["nm", exe]).stdout
        nd = int(re.search(r"^([0-9a-f]+) T nd$", nm, re.M).group(1), 16)
        self.assertEqual(got[nd], [])

    # ---- separate debug files ----

    def split(self, exe, debuglink=True):
        """exe -> (stripped copy, debug file), like distro packaging."""
        dbg = exe + ".debug"
        stripped = exe + ".stripped"
        harness.run(["objcopy", "--only-keep-debug", exe, dbg])
        harness.run(["objcopy", "--strip-debug", exe, stripped])
        if debuglink:
            harness.run(["objcopy", f"--add-gnu-debuglink={dbg}", stripped])
        return stripped, dbg

    def test_debuglink_locations(self):
        exe = self.build(CXX_SRCS, "clang++-22",
                         ["-O2", "-g"], "prog")
        stripped, dbg = self.split(exe)
        self.assertEqual(self.info(stripped)["debug_file"], dbg)
        self.assert_same_as_llvm(stripped, truth_binary=exe)
        # <dir>/.debug/<name>
        os.makedirs(self.scratch.path(".debug"))
        moved = self.scratch.path(".debug", os.path.basename(dbg))
        os.rename(dbg, moved)
        self.assertEqual(self.info(stripped)["debug_file"], moved)
        # <debugdir>/<absolute dir of binary>/<name>
        root = self.scratch.path("root")
        deep = root + os.path.realpath(self.scratch.dir)
        os.makedirs(deep)
        os.rename(moved, os.path.join(deep, os.path.basename(dbg)))
        self.assertEqual(self.info(stripped)["has_debug_info"], 0)
        info = self.info(stripped, [root])
        self.assertEqual(info["debug_file"], os.path.join(deep, os.path.basename(dbg)))
        self.assert_same_as_llvm(stripped, [root], truth_binary=exe)

    def test_debuglink_crc_mismatch_is_ignored(self):
        exe = self.build(C_SRCS, "clang-22", ["-O2", "-g"], "prog")
        stripped, dbg = self.split(exe)
        with open(dbg, "ab") as f:
            f.write(b"\0")
        self.assertEqual(self.info(stripped)["has_debug_info"], 0)

    def test_build_id_directory(self):
        exe = self.build(C_SRCS, "clang-19", ["-O2", "-g"], "prog")
        stripped, dbg = self.split(exe, debuglink=False)
        bid = self.info(stripped)["build_id"]
        self.assertEqual(self.info(stripped)["has_debug_info"], 0)
        root = self.scratch.path("dbgroot")
        os.makedirs(os.path.join(root, ".build-id", bid[:2]))
        target = os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug")
        shutil.move(dbg, target)
        info = self.info(stripped, [self.scratch.path("elsewhere"), root])
        self.assertEqual(info["debug_file"], target)
        self.assertEqual(info["build_id"], bid)
        self.assert_same_as_llvm(stripped, [root], truth_binary=exe)


if __name__ == "__main__":
    harness.main()
