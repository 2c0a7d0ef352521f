"""`memprof-profdata check` against the binaries clang-22 builds.

Programs are profiled with our runtime, merged, and rebuilt with
-fmemory-profile-use and the hot/cold operator new (as scripts/demo.sh
steps 6-7 do), with and without LTO, against libmemprof-hotcold static and
shared (PLT calls).  Ground truth:

* the hinted calls and their hints are what `llvm-objdump-22 -d` shows
  (parsed here: each call or tail jump of a __hot_cold_t form, and the
  immediate last moved into its hint register before it);
* the verdicts are what clang-22 attaches (`-S -emit-llvm`: the calls'
  "memprof" attributes and the !memprof MIB nodes);
* with LTO, the cold context's hint is the one in the clone that
  cold_path calls (objdump's call graph); a call LTO cannot clone apart
  (reached through a function pointer) is hinted 128, and one in a
  translation unit compiled without -flto keeps 222 (objdump's hints in
  those functions; the clones are objdump's `.memprof.` functions);
* the reasons: a build without the lifetime threshold, a source whose
  allocation moved (the profile no longer matches it; lines added at the
  top of the file do not stale it, as clang keys lines by their offset in
  the function), and a C program's malloc contexts.
"""
import json
import os
import re
import shutil
import sys
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hotcold"))
import hc_common as hc  # noqa: E402  (libmemprof-hotcold's link flags)
DEMO = os.path.join(harness.ROOT, "examples", "hotcold", "hotcold.cc")
CONTEXTS = os.path.join(harness.ROOT, "test", "hotcold", "progs", "contexts.cc")
C_MALLOC = os.path.join(HERE, "progs", "c_malloc.c")
POOL = os.path.join(HERE, "progs", "pool.cc")
APP = os.path.join(HERE, "progs", "app.cc")
PARTED = os.path.join(HERE, "progs", "parted.cc")
NATIVE = os.path.join(HERE, "progs", "native.cc")
THRESHOLD = "-memprof-ave-lifetime-cold-threshold=1"
USE = ["-O2", "-gmlt", "-fdebug-info-for-profiling"]
MIB = 1 << 20  # the demo's cold buffer

# The hint's argument register per __hot_cold_t form (AT&T names).
REGS = {1: ("%rsi", "%esi", "%si", "%sil"), 2: ("%rdx", "%edx", "%dx", "%dl"),
        3: ("%rcx", "%ecx", "%cx", "%cl")}
HINT_ARG = {
    "_Znwm12__hot_cold_t": 1, "_Znam12__hot_cold_t": 1,
    "_ZnwmRKSt9nothrow_t12__hot_cold_t": 2, "_ZnamRKSt9nothrow_t12__hot_cold_t": 2,
    "_ZnwmSt11align_val_t12__hot_cold_t": 2, "_ZnamSt11align_val_t12__hot_cold_t": 2,
    "_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t": 3,
    "_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t": 3,
    "__size_returning_new_hot_cold": 1, "__size_returning_new_aligned_hot_cold": 2,
}


def check_built():
    try:
        tool = harness.profdata_tool()
        harness.find_built("libmemprof-hotcold.a")
    except FileNotFoundError:
        return False
    return "not available" not in harness.run([tool, "check", "--help"]).stdout


needs_check = unittest.skipUnless(
    check_built(), "memprof-profdata check not built (libcapstone-dev missing) "
    "or libmemprof-hotcold not built")


def profile(scratch, src, name, ldflags=()):
    exe = harness.compile_program(scratch, src, out=name, opt="-O1", ldflags=ldflags)
    _, raws = harness.run_program(scratch, exe)
    prof = scratch.path(name + ".memprofdata")
    harness.run([harness.profdata_tool(), "merge", *raws,
                 f"--profiled-binary={exe}", "-o", prof])
    return prof


def profile_objects(scratch, srcs, name):
    """Profile the program of C++ sources `srcs` (compiled apart); returns
    the merged profile."""
    objs = []
    for src in srcs:
        obj = scratch.path(os.path.basename(src) + ".o")
        harness.run(["clang++-22", "-c", "-O1", *harness.PROFILE_FLAGS, src, "-o", obj])
        objs.append(obj)
    exe = scratch.path(name)
    harness.run(["clang++-22", *objs, "-o", exe, "-Wl,--whole-archive",
                 harness.find_built("libmemprof.a"), "-Wl,--no-whole-archive",
                 "-lpthread", "-ldl", "-lm"])
    _, raws = harness.run_program(scratch, exe)
    prof = scratch.path(name + ".memprofdata")
    harness.run([harness.profdata_tool(), "merge", *raws,
                 f"--profiled-binary={exe}", "-o", prof])
    return prof


# The LTO link: context disambiguation clones per context, then the hints.
CLONE = "-Wl,-plugin-opt=-enable-memprof-context-disambiguation"
LTO_HINTS = ["-Wl,-plugin-opt=-supports-hot-cold-new",
             "-Wl,-plugin-opt=-optimize-hot-cold-new",
             "-Wl,-plugin-opt=-optimize-existing-hot-cold-new"]


def build_use(scratch, src, prof, out, lto=False, threshold=True, kind="static"):
    cc = "clang++-22" if src.endswith(".cc") else "clang-22"
    t = ["-mllvm", THRESHOLD] if threshold else []
    exe = scratch.path(out)
    if not lto:
        harness.run([cc, *USE, f"-fmemory-profile-use={prof}", *t, "-mllvm",
                     "-optimize-hot-cold-new", src, "-o", exe, *hc.lib_flags(kind)])
        return exe
    obj = scratch.path(out + ".o")
    harness.run([cc, *USE, "-flto", f"-fmemory-profile-use={prof}", *t, "-c", src,
                 "-o", obj])
    harness.run([cc, "-O2", "-flto", "-fuse-ld=gold", obj, "-o", exe, CLONE,
                 *LTO_HINTS, *hc.lib_flags(kind)])
    return exe


AMBIGUOUS_NO_LTO = (
    "the call at 0x%x is reached by cold and not-cold contexts and was hinted "
    "ambiguous (222), and the binary has no LTO clones (no function named "
    "*.memprof.N): it was built without LTO, or with LTO without context "
    "disambiguation (-enable-memprof-context-disambiguation), which clones a "
    "call per context")


def check(prof, exe, threshold=True):
    args = [harness.profdata_tool(), "check", prof, exe, "--format=json"]
    if threshold:
        args.append("--" + THRESHOLD[1:])
    return json.loads(harness.run(args).stdout)


def objdump(exe):
    """{function: [(address, mnemonic, operands)]} of llvm-objdump-22 -d."""
    out = harness.run(["llvm-objdump-22", "-d", "--no-show-raw-insn", exe]).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return funcs


def branch_target(op, args):
    """The symbol a call or jmp goes to (without @plt), or None."""
    if not op.startswith(("call", "jmp")):
        return None
    m = re.search(r"<([^>+]+)>", args)
    return m.group(1).split("@")[0] if m else None


def objdump_hints(funcs):
    """{address: hint} of every __hot_cold_t call objdump shows."""
    hints = {}
    for insns in funcs.values():
        for i, (addr, op, args) in enumerate(insns):
            target = branch_target(op, args)
            if target not in HINT_ARG:
                continue
            regs, value = REGS[HINT_ARG[target]], None
            for _, pop, pargs in reversed(insns[:i]):
                if pop.startswith(("call", "jmp", "ret", "j")):
                    break
                ops = [o.strip() for o in pargs.split("#")[0].split(",")]
                if ops[-1] not in regs:
                    continue
                if pop.startswith("mov") and ops[0].startswith("$"):
                    value = int(ops[0][1:], 0) & 0xff
                elif pop.startswith("xor") and ops[0] == ops[-1]:
                    value = 0
                break
            hints[addr] = value
    return hints


def hints_reached(funcs, start):
    """Addresses of the __hot_cold_t calls in the functions that `start`
    reaches by direct calls and jumps (objdump's call graph)."""
    hinted = objdump_hints(funcs)
    seen, todo, found = set(), [start], set()
    while todo:
        f = todo.pop()
        if f in seen or f not in funcs:
            continue
        seen.add(f)
        for addr, op, args in funcs[f]:
            found |= {addr} & hinted.keys()
            t = branch_target(op, args)
            if t:
                todo.append(t)
    return found


def ir_call_attrs(ll):
    """{function: [memprof attribute of each annotated call]} and the
    !memprof MIB node types, from clang's IR."""
    groups = dict(re.findall(r'^attributes #(\d+) = \{[^}]*"memprof"="(\w+)"', ll, re.M))
    attrs, cur = {}, None
    for line in ll.splitlines():
        m = re.match(r"^define .*@(\S+?)\(", line)
        if m:
            cur = m.group(1)
            continue
        if cur and " call " in line:
            for g in re.findall(r"#(\d+)", line):
                if g in groups:
                    attrs.setdefault(cur, []).append(groups[g])
    mibs = re.findall(r'^!\d+ = !\{!\d+, !"(cold|notcold|hot)"', ll, re.M)
    return attrs, sorted(mibs)


def use_ir(scratch, src, prof, out):
    cc = "clang++-22" if src.endswith(".cc") else "clang-22"
    ll = scratch.path(out)
    harness.run([cc, *USE, f"-fmemory-profile-use={prof}", "-mllvm", THRESHOLD,
                 "-S", "-emit-llvm", src, "-o", ll])
    with open(ll) as f:
        return f.read()


def run_sites(scratch, exe, name):
    """Run exe with libmemprof-hotcold's call-site file (site_file,
    site_lifetimes); returns (path, parsed file)."""
    base = scratch.path(name)
    env = {"MEMPROF_HOTCOLD_OPTIONS": f"site_file={base}:site_lifetimes=1:idle_ms=0"}
    harness.run_program(scratch, exe, env=env)
    (path,) = [f for f in os.listdir(scratch.dir) if f.startswith(name + ".")]
    path = scratch.path(path)
    with open(path) as f:
        return path, hc.parse_site_file(f.read())


def check_run(prof, exe, sites, fmt="json", threshold=True):
    args = [harness.profdata_tool(), "check", prof, exe, f"--hotcold-sites={sites}",
            f"--format={fmt}"]
    if threshold:
        args.append("--" + THRESHOLD[1:])
    out = harness.run(args).stdout
    return json.loads(out) if fmt == "json" else out


def leaf(ctx):
    return ctx["frames"][0]["function"]


def calls_of(result):
    return {c["address"]: c["value"] for c in result["calls"]}


@needs_check
class CheckDemo(unittest.TestCase):
    """examples/hotcold: make_buffer serves a cold and a hot path."""

    @classmethod
    def setUpClass(cls):
        cls.work = harness.Scratch("check-demo")
        cls.src = cls.work.path("hotcold.cc")
        shutil.copy(DEMO, cls.src)
        cls.prof = profile(cls.work, cls.src, "hotcold.prof")
        cls.plain = build_use(cls.work, cls.src, cls.prof, "plain")
        cls.lto = build_use(cls.work, cls.src, cls.prof, "lto", lto=True, kind="shared")

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def contexts(self, result):
        """The two make_buffer contexts: (cold path's, hot path's)."""
        ctx = [c for c in result["contexts"] if leaf(c) == "make_buffer(unsigned long)"]
        self.assertEqual(len(ctx), 2)
        by_caller = {c["frames"][1]["function"]: c for c in ctx}
        return by_caller["cold_path(int)"], by_caller["hot_path(int)"]

    def test_calls_and_hints_are_objdumps(self):
        for exe in (self.plain, self.lto):
            with self.subTest(exe=os.path.basename(exe)):
                self.assertEqual(calls_of(check(self.prof, exe)),
                                 objdump_hints(objdump(exe)))

    def test_without_lto_the_shared_call_is_ambiguous(self):
        r = check(self.prof, self.plain)
        ir_attrs, mibs = ir_call_attrs(use_ir(self.work, self.src, self.prof, "p.ll"))
        self.assertEqual(ir_attrs["_Z11make_bufferm"], ["ambiguous"])
        cold, hot = self.contexts(r)
        # clang's MIB nodes are the two contexts' verdicts
        self.assertEqual(sorted([cold["verdict"], hot["verdict"]]), mibs)
        self.assertEqual(cold["verdict"], "cold")
        (addr,) = calls_of(r)
        self.assertEqual(calls_of(r)[addr], 222)
        for c in (cold, hot):
            self.assertEqual(c["call"], "ambiguous")
            self.assertEqual(c["hints"], [{"address": addr, "value": 222}])
        self.assertEqual(cold["reason"], "ambiguous_no_lto")
        self.assertEqual(cold["why"], AMBIGUOUS_NO_LTO % addr)
        self.assertEqual(hot["reason"], "density_threshold")
        s = r["summary"]
        self.assertEqual((s["cold_contexts"], s["cold_bytes"], s["cold_hinted_bytes"]),
                         (1, MIB, 0))
        self.assertEqual(s["cold_missed"], {"ambiguous_no_lto": {"contexts": 1, "bytes": MIB}})
        self.assertEqual(s["unexplained_calls"], 0)

    def test_with_lto_each_clone_serves_its_context(self):
        r = check(self.prof, self.lto)
        funcs = objdump(self.lto)
        hints = objdump_hints(funcs)
        # the function holding the cold hint, and cold_path calls it
        (cold_addr,) = [a for a, v in hints.items() if v == 1]
        holder = next(f for f, ins in funcs.items() if any(a == cold_addr for a, _, _ in ins))
        self.assertIn(".memprof.", holder)
        self.assertIn(holder, {branch_target(op, args) for _, op, args in funcs["_Z9cold_pathi"]})
        (hot_addr,) = [a for a, v in hints.items() if v == 128]
        cold, hot = self.contexts(r)
        self.assertEqual(cold["hints"], [{"address": cold_addr, "value": 1}])
        self.assertNotIn("reason", cold)
        self.assertEqual(hot["hints"], [{"address": hot_addr, "value": 128}])
        s = r["summary"]
        self.assertEqual((s["cold_hinted_contexts"], s["cold_hinted_bytes"]), (1, MIB))
        self.assertEqual(s["cold_missed"], {})
        self.assertEqual(s["unexplained_calls"], 0)
        call = next(c for c in r["calls"] if c["address"] == cold_addr)
        self.assertEqual(call["symbol"], holder)
        self.assertEqual(call["frames"][0]["line"], 10)

    def test_default_threshold_says_which_would_make_it_cold(self):
        exe = build_use(self.work, self.src, self.prof, "defaults", threshold=False)
        r = check(self.prof, exe, threshold=False)
        cold, hot = self.contexts(r)
        self.assertEqual(cold["verdict"], "notcold")
        self.assertEqual(cold["hints"][0]["value"], 128)
        self.assertEqual(cold["reason"], "lifetime_threshold")
        # lived 1.5 s: 1 s is the largest whole threshold that makes it cold
        self.assertIn("-memprof-ave-lifetime-cold-threshold=200; =1 would make it cold",
                      cold["why"])

    def test_moved_allocation_is_a_stale_profile(self):
        src = self.work.path("moved.cc")
        with open(self.src) as f:
            text = f.read()
        one_line = "char *make_buffer(size_t n) { return new char[n]; }"
        self.assertIn(one_line, text)
        with open(src, "w") as f:
            f.write(text.replace(one_line, "char *make_buffer(size_t n) {\n"
                                 "  return new char[n];\n}"))
        exe = build_use(self.work, src, self.prof, "moved")
        ir_attrs, _ = ir_call_attrs(use_ir(self.work, src, self.prof, "moved.ll"))
        self.assertNotIn("_Z11make_bufferm", ir_attrs)  # clang matched nothing
        r = check(self.prof, exe)
        self.assertEqual(calls_of(r), {})
        for c in self.contexts(r):
            self.assertEqual(c["hints"], [])
            self.assertEqual(c["reason"], "stale_profile")
            self.assertIn("does not match the source of make_buffer(unsigned long)",
                          c["why"])
        self.assertEqual(r["summary"]["cold_missed"],
                         {"stale_profile": {"contexts": 1, "bytes": MIB}})

    def test_renamed_function_is_not_in_the_binary(self):
        src = self.work.path("renamed.cc")
        with open(self.src) as f:
            text = f.read()
        with open(src, "w") as f:
            f.write(text.replace("make_buffer", "get_buffer"))
        r = check(self.prof, build_use(self.work, src, self.prof, "renamed"))
        self.assertEqual(calls_of(r), {})
        for c in self.contexts(r):
            self.assertEqual(c["reason"], "not_in_binary")
            self.assertTrue(c["why"].startswith(
                "the function is not in the binary: make_buffer(unsigned long)"), c["why"])

    def test_lines_added_at_the_top_still_match(self):
        src = self.work.path("top.cc")
        with open(self.src) as f:
            text = f.read()
        with open(src, "w") as f:
            f.write("// one\n// two\n// three\n" + text)
        exe = build_use(self.work, src, self.prof, "top")
        ir_attrs, _ = ir_call_attrs(use_ir(self.work, src, self.prof, "top.ll"))
        self.assertEqual(ir_attrs["_Z11make_bufferm"], ["ambiguous"])
        r = check(self.prof, exe)
        for c in self.contexts(r):
            self.assertEqual([h["value"] for h in c["hints"]], [222])

    def test_run_joined_to_each_clones_hint(self):
        # the LTO build: the cold clone's tail jump served the 1 MiB buffer
        # cold, the other 1000 blocks of 256 bytes not cold
        path, f = run_sites(self.work, self.lto, "lto-sites")
        self.assertEqual(f["total"], {"cold_allocs": 1, "cold_bytes": MIB,
                                      "other_allocs": 1000, "other_bytes": 256000})
        r = check_run(self.prof, self.lto, path)
        hints = objdump_hints(objdump(self.lto))
        (cold_addr,) = [a for a, v in hints.items() if v == 1]
        (hot_addr,) = [a for a, v in hints.items() if v == 128]
        runs = {c["address"]: c["run"] for c in r["calls"]}
        (cold_site,) = [s for s in f["sites"] if s["hint"] == 1]
        n = cold_site["freed"] + cold_site["live"]
        self.assertEqual(runs[cold_addr], {
            "cold_allocs": 1, "cold_bytes": MIB, "other_allocs": 0, "other_bytes": 0,
            "freed": 1, "live": 0, "lifetime_avg_ns": cold_site["lifetime_total_ns"] // n,
            "lifetime_min_ns": cold_site["lifetime_min_ns"],
            "lifetime_max_ns": cold_site["lifetime_max_ns"], "died_young": False})
        # cold_path keeps its buffer 1.5 s
        self.assertGreaterEqual(runs[cold_addr]["lifetime_min_ns"], 1_500_000_000)
        self.assertEqual({k: runs[hot_addr][k] for k in
                          ("cold_allocs", "other_allocs", "other_bytes", "freed", "live")},
                         {"cold_allocs": 0, "other_allocs": 1000, "other_bytes": 256000,
                          "freed": 1000, "live": 0})
        self.assertEqual(r["summary"]["run"], {
            "file": path, "lifetimes": True, "joined_calls": 2, "cold_allocs": 1,
            "cold_bytes": MIB, "other_allocs": 1000, "other_bytes": 256000,
            "died_young_calls": 0, "unjoined_sites": 0, "unjoined_allocs": 0,
            "unjoined_bytes": 0, "other_module_sites": 0})
        text = check_run(self.prof, self.lto, path, fmt="text")
        self.assertRegex(text, r"\n    run: cold hint at hotcold\.cc:10: 1 allocation, "
                         r"1\.00 MiB served cold, average lifetime 1\.5\d* s \(min ")
        self.assertIn("\n    run: notcold hint at hotcold.cc:10: 1,000 allocations, "
                      "250.00 KiB not cold, average lifetime ", text)
        self.assertIn(f"  optimized run    {path}: 2 hinted calls served 1 allocation "
                      "cold (1.00 MiB), 1,000 not cold (250.00 KiB); 0 died young\n", text)
        self.assertNotIn("died young:", text)

    def test_run_without_lto_is_all_ambiguous(self):
        path, _ = run_sites(self.work, self.plain, "plain-sites")
        r = check_run(self.prof, self.plain, path)
        (call,) = r["calls"]
        self.assertEqual(call["value"], 222)
        self.assertEqual({k: call["run"][k] for k in
                          ("cold_allocs", "cold_bytes", "other_allocs", "other_bytes")},
                         {"cold_allocs": 0, "cold_bytes": 0, "other_allocs": 1001,
                          "other_bytes": MIB + 256000})
        self.assertEqual(r["summary"]["run"]["joined_calls"], 1)

    def test_cold_blocks_that_died_young_are_flagged(self):
        path, f = run_sites(self.work, self.lto, "young-sites")
        with open(path) as fh:
            text = fh.read()
        (cold,) = [s for s in f["sites"] if s["hint"] == 1]
        old = (f"lifetime_total_ns={cold['lifetime_total_ns']} "
               f"lifetime_min_ns={cold['lifetime_min_ns']} "
               f"lifetime_max_ns={cold['lifetime_max_ns']}")
        self.assertIn(old, text)
        young = self.work.write("young", text.replace(old, "lifetime_total_ns=200000000 "
                                "lifetime_min_ns=200000000 lifetime_max_ns=200000000"))
        r = check_run(self.prof, self.lto, young)
        (call,) = [c for c in r["calls"] if c["value"] == 1]
        self.assertEqual((call["run"]["lifetime_avg_ns"], call["run"]["died_young"]),
                         (200_000_000, True))
        self.assertEqual(r["summary"]["run"]["died_young_calls"], 1)
        out = check_run(self.prof, self.lto, young, fmt="text")
        self.assertIn("\n    died young: served cold, yet its blocks lived 200 ms on "
                      "average, under the cold lifetime threshold of 1 s "
                      "(--memprof-ave-lifetime-cold-threshold)\n", out)
        # the rule is the threshold given: at clang's default 200 s the
        # real run's 1.5 s is young too
        r = check_run(self.prof, self.lto, path, threshold=False)
        (call,) = [c for c in r["calls"] if c["value"] == 1]
        self.assertTrue(call["run"]["died_young"])

    def test_damaged_site_files_are_refused(self):
        path, _ = run_sites(self.work, self.lto, "bad-sites")
        with open(path) as fh:
            good = fh.read()
        lines = good.splitlines(keepends=True)
        cases = {
            "truncated": ("".join(lines[:-1]), "line %d: end of file where the end line "
                          "was expected (truncated file?)" % len(lines)),
            "magic": (good.replace("memprof-hotcold-sites", "memprof-hotcold-sitez", 1),
                      "not a libmemprof-hotcold call-site file"),
            "version": (good.replace("version=1", "version=7", 1),
                        "call-site file version 7 is not supported (this tool reads "
                        "version 1)"),
            "total": (good.replace("total cold_allocs=1 ", "total cold_allocs=2 "),
                      "line %d: counts do not add up: the sites' cold_allocs sum to 1, "
                      "the total line says 2" % (len(lines) - 1)),
        }
        for name, (text, want) in cases.items():
            with self.subTest(damage=name):
                bad = self.work.write("damaged-" + name, text)
                r = harness.run([harness.profdata_tool(), "check", self.prof, self.lto,
                                 f"--hotcold-sites={bad}"], check=False)
                self.assertEqual(r.returncode, 1)
                self.assertEqual(r.stdout, "")
                self.assertEqual(r.stderr, f"memprof-profdata: error: {bad}: {want}\n"
                                 if name != "magic" else
                                 f"memprof-profdata: error: {bad}: {want} (it does not "
                                 "begin with \"memprof-hotcold-sites\")\n")

    def test_text_summary(self):
        out = harness.run([harness.profdata_tool(), "check", self.prof, self.plain,
                           "--" + THRESHOLD[1:]]).stdout
        self.assertIn("  hinted calls     1 ambiguous=1\n", out)
        self.assertIn("    ambiguous_no_lto     1 context, 1048576 bytes\n", out)


def nested_source(path):
    """examples/hotcold with a function between each path and make_buffer:
    hot_path and cold_path both call wrap, which calls make_buffer."""
    with open(DEMO) as f:
        text = f.read()
    alloc = "char *make_buffer(size_t n) { return new char[n]; }\n"
    assert alloc in text and text.count("char *b = make_buffer(") == 2
    text = text.replace(alloc, alloc + "__attribute__((noinline)) char *wrap(size_t n) "
                        "{ return make_buffer(n); }\n")
    with open(path, "w") as f:
        f.write(text.replace("char *b = make_buffer(", "char *b = wrap("))
    return path


@needs_check
class CheckNested(unittest.TestCase):
    """examples/hotcold with wrap between the paths and make_buffer, built
    with LTO: make_buffer and wrap are both cloned; each path reaches its
    own clone's hint."""

    def test_each_path_reaches_its_clones_hint(self):
        work = harness.Scratch("check-nested")
        try:
            src = nested_source(work.path("nested.cc"))
            prof = profile(work, src, "nested.prof")
            exe = build_use(work, src, prof, "nested", lto=True)
            r = check(prof, exe)
            funcs = objdump(exe)
        finally:
            work.cleanup()
        self.assertEqual(calls_of(r), objdump_hints(funcs))
        self.assertTrue(any(".memprof." in f and f.startswith("_Z4wrap") for f in funcs))
        ctx = {c["frames"][2]["function"]: c for c in r["contexts"]
               if leaf(c) == "make_buffer(unsigned long)"}
        for path, value in (("cold_path(int)", 1), ("hot_path(int)", 128)):
            want = hints_reached(funcs, "_Z%d%si" % (len(path) - 5, path[:-5]))
            self.assertEqual(len(want), 1)
            self.assertEqual(ctx[path]["hints"], [{"address": want.pop(), "value": value}])
        self.assertEqual(r["summary"]["cold_hinted_bytes"], MIB)


@needs_check
class CheckLtoParted(unittest.TestCase):
    """progs/parted.cc built with LTO and progs/native.cc without: LTO
    clones make_buffer per path; make_block, reached through a function
    pointer, cannot be cloned apart and LTO hints its call not cold;
    native.cc's make_native keeps the ambiguous hint clang gave it."""

    @classmethod
    def setUpClass(cls):
        cls.work = harness.Scratch("check-lto-parted")
        cls.prof = profile_objects(cls.work, (PARTED, NATIVE), "parted")
        lto, native = cls.work.path("parted.lto.o"), cls.work.path("native.use.o")
        use = ["-fmemory-profile-use=" + cls.prof, "-mllvm", THRESHOLD]
        harness.run(["clang++-22", *USE, "-flto", *use, "-c", PARTED, "-o", lto])
        harness.run(["clang++-22", *USE, *use, "-mllvm", "-optimize-hot-cold-new", "-c",
                     NATIVE, "-o", native])
        cls.exe, cls.plain = cls.work.path("use"), cls.work.path("use-no-clones")
        for exe, clone in ((cls.exe, [CLONE]), (cls.plain, [])):
            harness.run(["clang++-22", "-O2", "-flto", "-fuse-ld=gold", lto, native,
                         "-o", exe, *clone, *LTO_HINTS, *hc.lib_flags("static")])

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def cold(self, result, func):
        (ctx,) = [c for c in result["contexts"]
                  if leaf(c) == func and c["verdict"] == "cold"]
        return ctx

    def missed(self, result, funcs, func, value, reason):
        """(why, address) of the cold context of `func` (make_buffer, ...):
        the one hinted call in func, `value` per objdump, serves it, and
        the reason is `reason`."""
        hints = objdump_hints(funcs)
        ((addr, hint),) = [(a, hints[a]) for a, _, _ in
                           funcs["_Z%d%sm" % (len(func), func)] if a in hints]
        self.assertEqual(hint, value)
        ctx = self.cold(result, func + "(unsigned long)")
        self.assertEqual(ctx["hints"], [{"address": addr, "value": value}])
        self.assertEqual(ctx["reason"], reason)
        return ctx["why"], addr

    def test_each_call_says_how_lto_left_it(self):
        r = check(self.prof, self.exe)
        text = harness.run([harness.profdata_tool(), "check", self.prof, self.exe,
                            "--" + THRESHOLD[1:]]).stdout
        funcs = objdump(self.exe)
        self.assertEqual(calls_of(r), objdump_hints(funcs))
        self.assertEqual([f for f in funcs if ".memprof." in f], ["_Z11make_bufferm.memprof.1"])
        # LTO cloned make_buffer: the cold path reaches the clone's cold hint
        buffer = self.cold(r, "make_buffer(unsigned long)")
        self.assertEqual([h["value"] for h in buffer["hints"]], [1])
        self.assertNotIn("reason", buffer)
        # the function pointer: one call, hinted not cold, serves both paths
        why, addr = self.missed(r, funcs, "make_block", 128, "call_not_cold")
        self.assertEqual(why, (
            "the call at 0x%x was hinted notcold (128): LTO cloned functions of this "
            "binary (1 clone, *.memprof.N), but this context's path reaches this copy: "
            "context disambiguation could not clone it apart from the not-cold contexts "
            "at the call (they part at an indirect call, or inside a recursion) and "
            "hints such a mix not cold; or the build had other -memprof-* thresholds "
            "than check was given") % addr)
        # native.cc, compiled without -flto, keeps clang's ambiguous hint
        why, addr = self.missed(r, funcs, "make_native", 222, "ambiguous_after_lto")
        self.assertEqual(why, (
            "the call at 0x%x is reached by cold and not-cold contexts and was hinted "
            "ambiguous (222), though LTO cloned functions of this binary (1 clone, "
            "*.memprof.N): LTO's context disambiguation hints every call it handles "
            "cold or not cold, so it left this one as compiled: its translation unit was "
            "compiled without -flto, or its contexts' callers did not match the calls "
            "LTO saw (inlined differently than in the profiled build)") % addr)
        self.assertEqual(r["summary"]["cold_missed"], {
            "ambiguous_after_lto": {"contexts": 1, "bytes": MIB},
            "call_not_cold": {"contexts": 1, "bytes": MIB}})
        self.assertIn("\n    ambiguous_after_lto  1 context, 1048576 bytes\n"
                      "    call_not_cold        1 context, 1048576 bytes\n", text)

    def test_without_clones_lto_is_not_claimed(self):
        # LTO without context disambiguation: no clones, every call ambiguous
        r = check(self.prof, self.plain)
        funcs = objdump(self.plain)
        self.assertEqual([f for f in funcs if ".memprof." in f], [])
        self.assertEqual(set(objdump_hints(funcs).values()), {222})
        for func in ("make_buffer", "make_block", "make_native"):
            with self.subTest(func=func):
                why, addr = self.missed(r, funcs, func, 222, "ambiguous_no_lto")
                self.assertEqual(why, AMBIGUOUS_NO_LTO % addr)


@needs_check
class CheckForms(unittest.TestCase):
    """test/hotcold/progs/contexts.cc: every __hot_cold_t form, a cold and
    a warm context each, each in its own function."""

    @classmethod
    def setUpClass(cls):
        cls.work = harness.Scratch("check-forms")
        cls.prof = profile(cls.work, CONTEXTS, "contexts.prof", ldflags=[
            "-Wl,--defsym=__size_returning_new=_Znwm",
            "-Wl,--defsym=__size_returning_new_aligned=_ZnwmSt11align_val_t"])
        cls.exe = build_use(cls.work, CONTEXTS, cls.prof, "contexts", kind="shared")
        cls.ir, _ = ir_call_attrs(use_ir(cls.work, CONTEXTS, cls.prof, "contexts.ll"))

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def test_calls_and_hints_are_objdumps(self):
        r = check(self.prof, self.exe)
        hints = objdump_hints(objdump(self.exe))
        self.assertEqual(len(hints), 20)
        self.assertEqual(calls_of(r), hints)

    def test_verdicts_and_hints_agree_with_clang(self):
        r = check(self.prof, self.exe)
        seen = 0
        for c in r["contexts"]:
            name = leaf(c)
            if not name.startswith(("cold_", "warm_")):
                continue
            mangled = "_Z%d%sv" % (len(name.split("(")[0]), name.split("(")[0])
            with self.subTest(context=name):
                self.assertEqual(self.ir[mangled], [c["verdict"]])
                want = 1 if c["verdict"] == "cold" else 128
                self.assertEqual([h["value"] for h in c["hints"]], [want])
                self.assertEqual(c["verdict"], "cold" if name.startswith("cold_") else "notcold")
                if name.startswith("cold_"):
                    self.assertNotIn("reason", c)
                else:
                    self.assertIn(c["reason"], ("density_threshold", "lifetime_threshold"))
            seen += 1
        self.assertEqual(seen, 20)
        self.assertEqual(r["summary"]["cold_hinted_contexts"], 10)
        self.assertEqual(r["summary"]["unexplained_calls"], 0)


@needs_check
class CheckOffPath(unittest.TestCase):
    """progs/pool.cc's grow, hinted cold when clang compiles pool.cc,
    inlined by LTO into progs/app.cc's profiled and unprofiled: the copy
    in unprofiled lies on a path no context reached and is counted and
    listed apart, with the helper it inherits the hint from."""

    def test_inlined_helper_hint_is_counted_apart(self):
        work = harness.Scratch("check-offpath")
        try:
            prof = profile_objects(work, (POOL, APP), "app")
            lto = []
            for src in (POOL, APP):
                obj = work.path(os.path.basename(src) + ".lto.o")
                harness.run(["clang++-22", *USE, "-flto", f"-fmemory-profile-use={prof}",
                             "-mllvm", THRESHOLD, "-c", src, "-o", obj])
                lto.append(obj)
            use = work.path("use")
            harness.run(["clang++-22", "-O2", "-flto", "-fuse-ld=gold", *lto, "-o", use,
                         "-Wl,-plugin-opt=-supports-hot-cold-new",
                         "-Wl,-plugin-opt=-optimize-hot-cold-new", *hc.lib_flags("static")])
            r = check(prof, use)
            text = harness.run([harness.profdata_tool(), "check", prof, use,
                                "--" + THRESHOLD[1:]]).stdout
            funcs = objdump(use)
        finally:
            work.cleanup()
        hints = objdump_hints(funcs)
        self.assertEqual(calls_of(r), hints)
        holder = {a: f for f, ins in funcs.items() for a, _, _ in ins if a in hints}
        self.assertEqual(sorted(holder.values()), ["_Z10unprofiledm", "_Z8profiledm"])
        self.assertEqual(set(hints.values()), {1})
        by_fn = {holder[c["address"]]: c for c in r["calls"]}
        on, off = by_fn["_Z8profiledm"], by_fn["_Z10unprofiledm"]
        (ctx,) = r["contexts"]
        self.assertEqual((ctx["verdict"], ctx["bytes"]), ("cold", 1 << 20))
        self.assertEqual(on["contexts"], [0])
        self.assertNotIn("off_path", on)
        self.assertEqual(off["contexts"], [])
        self.assertEqual(off["off_path"], {"helper": "_Z4growm", "helper_frames": 1,
                                           "context": 0, "verdict": "cold"})
        self.assertEqual([f["function"] for f in off["frames"]], ["_Z4growm", "_Z10unprofiledm"])
        s = r["summary"]
        self.assertEqual((s["hinted_calls"], s["off_path_calls"], s["unexplained_calls"]),
                         (2, 1, 0))
        self.assertIn("\n  unexplained      0 hinted calls no context of the profile "
                      "reaches\n  off the paths    1 hinted call on paths no context "
                      "reached, with a helper's hint (listed apart)\n", text)
        listed, apart = text.split("\nHinted calls on paths no context reached (a "
                                   "helper's hint, inlined or cloned into them):\n")
        self.assertIn("0x%x _Znwm12__hot_cold_t 1 (cold), 1 context\n" % on["address"],
                      listed)
        self.assertNotIn("0x%x" % off["address"], listed)
        self.assertEqual(apart.strip().splitlines()[0],
                         "0x%x _Znwm12__hot_cold_t 1 (cold), inherited from "
                         "grow(unsigned long): its cold context #0" % off["address"])
        self.assertIn("    unprofiled(unsigned long) ", apart)


@needs_check
class CheckMalloc(unittest.TestCase):
    """A C program: clang hints no malloc, and check says so."""

    def test_malloc_contexts_say_why(self):
        work = harness.Scratch("check-malloc")
        try:
            prof = profile(work, C_MALLOC, "c_malloc.prof")
            exe = build_use(work, C_MALLOC, prof, "c_malloc")
            r = check(prof, exe)
        finally:
            work.cleanup()
        self.assertEqual(r["calls"], [])
        by_leaf = {leaf(c): c for c in r["contexts"]}
        keep, busy = by_leaf["keep_block"], by_leaf["busy_block"]
        self.assertEqual((keep["verdict"], keep["bytes"]), ("cold", 1 << 16))
        self.assertEqual((busy["verdict"], busy["allocs"]), ("notcold", 500))
        for c, fn in ((keep, "malloc"), (busy, "calloc")):
            self.assertEqual(c["hints"], [])
            self.assertEqual(c["reason"], "malloc")
            self.assertTrue(c["why"].startswith(f"allocated by {fn} (call at 0x"), c["why"])
        self.assertEqual(r["summary"]["cold_missed"],
                         {"malloc": {"contexts": 1, "bytes": 1 << 16}})


if __name__ == "__main__":
    harness.main()
