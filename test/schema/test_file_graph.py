"""test_file_graph.py - the folders' order and no cycles between files.

A file depends on another when its object file uses a function or global
the other defines (`nm`), or when it includes the other's header.  The
tool's libraries (profdata, symbolizer, common) and the hot/cold
allocator must have no cycle between files.

The tools' folders are layered as profdata/README.md's "may use" table
says (TOOL_LAYERS below): a folder uses only folders below it, and its
private header (*_priv.h, *_internal.h) stays inside it.  Includes that
cross folders are paths from the repository root; a folder's own headers
are included by bare name.

The runtime is layered (runtime/README.md): each file belongs to the layer
of its folder, and may use files of its own layer or of the layers below.
The only symbols used up the layers are the two designed slow-path hooks,
RUNTIME_UPWARD_HOOKS below, each with its reason; no file includes a
higher layer's header.  Within the heap's layer, the allocator's own
files call only the ones below them, in the order rt_heap_priv.h lists."""
import glob
import os
import re
import subprocess
import unittest

import harness

LIBS = {
    "profdata": "profdata/CMakeFiles/memprof_profdata_core.dir",
    "symbolizer": "symbolizer/CMakeFiles/memprof_symbolizer.dir",
    "common": "common/CMakeFiles/memprof_common.dir",
    "hotcold": "hotcold/CMakeFiles/memprof_hotcold_objs.dir",
}

# ---- the runtime's layers ------------------------------------------------
RUNTIME = "runtime/CMakeFiles/memprof_rt_objs.dir"
# Bottom to top, as runtime/README.md lists them: a file's layer is its
# folder under runtime/.
RUNTIME_LAYERS = ["base", "record", "heap", "output", "entry", "start"]
# The symbols a file may use from a layer above its own: {symbol: (the
# file that defines it, why the call goes up)}.
RUNTIME_UPWARD_HOOKS = {
    "rt_init_core": (
        "rt_init",
        "lazy start-up: the heap's first allocation (rt_heap.c, "
        "rt_heap_layout.c) may come before any constructor ran, and starts "
        "the runtime through the init entry"),
    "rt_mib_merge_parked": (
        "rt_mibtable",
        "leaving the last lock (rt_locks_leave, inline in the files that take "
        "runtime locks) merges the MIBs signal handlers parked meanwhile, "
        "which they could not merge under the interrupted thread's locks"),
}
# Top to bottom, as rt_heap_priv.h's file comment lists them.
HEAP_ORDER = ["rt_heap", "rt_heap_tcache", "rt_heap_nested", "rt_heap_central",
              "rt_heap_populate", "rt_heap_libc", "rt_heap_layout"]



# The tools' folders from the bottom up (profdata/README.md): each may use
# the folders of lower layers and its own, never one of its layer or above.
TOOL_LAYERS = [
    ["include"],
    ["include/internal"],
    ["common"],
    ["symbolizer"],
    ["profdata/llvm", "profdata/model", "profdata/timeline", "profdata/roots",
     "profdata/hcsites"],
    ["profdata/instrprof"],
    ["profdata/raw", "profdata/yaml", "profdata/indexed"],
    ["profdata/report", "profdata/merge"],
    ["profdata/check"],
    ["profdata/tool"],
]
TOOL_OBJS = {  # object folder in the build -> source folder it mirrors
    "common/CMakeFiles/memprof_common.dir": "common",
    "symbolizer/CMakeFiles/memprof_symbolizer.dir": "symbolizer",
    "profdata/CMakeFiles/memprof_profdata_core.dir": "profdata",
    "profdata/CMakeFiles/memprof-profdata.dir": "profdata",
    "profdata/CMakeFiles/memprof_profdata_check.dir": "profdata",
}
PRIVATE_HEADER = re.compile(r"_(priv|internal)\.h$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(folder):
    for i, layer in enumerate(TOOL_LAYERS):
        if folder in layer:
            return i
    raise KeyError(f"{folder}: in no layer of TOOL_LAYERS")


def tool_objects():
    """{source path: object path} of the tools' objects whose source
    exists (a build folder may keep objects of moved files)."""
    found = {}
    for objdir, srcdir in TOOL_OBJS.items():
        base = os.path.join(harness.BUILD, objdir)
        for o in glob.glob(os.path.join(base, "**", "*.c.o"), recursive=True):
            src = os.path.join(srcdir, os.path.relpath(o, base)[:-2])
            if os.path.exists(os.path.join(harness.ROOT, src)):
                found[src] = o
    return found


def tool_file_graph():
    """{source file: the source files whose symbols it uses}."""
    objs = tool_objects()
    by_obj = {o: s for s, o in objs.items()}
    args = sorted(objs.values())
    defined, used = {}, {}
    out = subprocess.run(["nm", "-A", "--defined-only"] + args, capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        path, _, rest = line.partition(":")
        r = rest.split()
        if len(r) == 3 and r[1] in "TDBRVW":
            defined[r[2]] = by_obj[path]
    out = subprocess.run(["nm", "-A", "-u"] + args, capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        path, _, rest = line.partition(":")
        if rest.split():
            used.setdefault(by_obj[path], set()).add(rest.split()[-1])
    return {f: {defined[s] for s in syms if s in defined and defined[s] != f}
            for f, syms in used.items()}


def tool_sources():
    for top in ("include", "common", "symbolizer", "profdata", "hotcold"):
        for d, _, files in os.walk(os.path.join(harness.ROOT, top)):
            for f in files:
                if f.endswith((".c", ".h", ".inc")):
                    yield os.path.relpath(os.path.join(d, f), harness.ROOT)


def include_problems():
    """Includes that break the rules: a folder's own header by path,
    another folder's by bare name, a private header from outside."""
    bad = []
    for src in tool_sources():
        folder = os.path.dirname(src)
        with open(os.path.join(harness.ROOT, src)) as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            if "/" not in name:
                if not os.path.exists(os.path.join(harness.ROOT, folder, name)) and \
                        name != "report_page.h":  # generated in the build folder
                    bad.append(f"{src}: \"{name}\" is not in {folder}/: write its path")
                continue
            if not os.path.exists(os.path.join(harness.ROOT, name)):
                bad.append(f"{src}: \"{name}\" does not exist")
            elif os.path.dirname(name) == folder:
                bad.append(f"{src}: \"{name}\" is in its own folder: write its bare name")
            elif PRIVATE_HEADER.search(name):
                bad.append(f"{src}: \"{name}\" is private to {os.path.dirname(name)}/")
    return bad


def include_graph():
    """{source file: the headers of other folders it includes}."""
    g = {}
    for src in tool_sources():
        with open(os.path.join(harness.ROOT, src)) as f:
            names = INCLUDE.findall(f.read())
        g[src] = {n for n in names if "/" in n}
    return g


def layer_violations(graph):
    """Edges from a folder to one of its own layer (not itself) or above."""
    bad = []
    for src, deps in sorted(graph.items()):
        folder = os.path.dirname(src)
        if folder.startswith("hotcold"):
            continue
        for dep in sorted(deps):
            to = os.path.dirname(dep)
            if to != folder and layer_of(to) >= layer_of(folder):
                bad.append(f"{src} -> {dep}")
    return bad


def runtime_layer_of():
    """{file: index of its layer in RUNTIME_LAYERS}; a folder that is no
    layer gets -1."""
    root = os.path.join(harness.BUILD, RUNTIME)
    found = {}
    for o in glob.glob(os.path.join(root, "**", "*.o"), recursive=True):
        folder = os.path.relpath(os.path.dirname(o), root).split(os.sep)[0]
        name = os.path.basename(o).split(".")[0]
        found[name] = RUNTIME_LAYERS.index(folder) if folder in RUNTIME_LAYERS else -1
    return found


def upward_uses(objs_root):
    """[(file, symbol, file defining it)] for every use of a symbol defined
    in a higher layer that RUNTIME_UPWARD_HOOKS does not list."""
    objs = sorted(glob.glob(os.path.join(objs_root, "**", "*.o"), recursive=True))
    layer = runtime_layer_of()
    owner = {s: f for f, syms in symbols(objs, True).items() for s in syms}
    bad = []
    for f, syms in sorted(symbols(objs, False).items()):
        for s in sorted(syms):
            g = owner.get(s)
            if g and g != f and layer[g] > layer[f]:
                hook = RUNTIME_UPWARD_HOOKS.get(s)
                if not hook or hook[0] != g:
                    bad.append((f, s, g))
    return bad


def upward_includes():
    """[(file, included header)] for every runtime source or header that
    includes a header of a higher layer (by path from the project root,
    runtime/<layer>/...), or names one of another folder bare."""
    root = os.path.join(harness.ROOT, "runtime")
    bad = []
    for f in sorted(glob.glob(os.path.join(root, "*", "rt_*.[ch]"))):
        folder = os.path.basename(os.path.dirname(f))
        with open(f) as fh:
            for line in fh:
                m = re.match(r'#include "(runtime/(\w+)/)?(rt_[\w.]+)"', line)
                if not m:
                    continue
                if m.group(2):
                    if RUNTIME_LAYERS.index(m.group(2)) > RUNTIME_LAYERS.index(folder):
                        bad.append((os.path.relpath(f, root), m.group(1) + m.group(3)))
                elif not os.path.exists(os.path.join(os.path.dirname(f), m.group(3))):
                    bad.append((os.path.relpath(f, root), m.group(3)))
    return bad
# ---- end of the runtime's layers -----------------------------------------


def symbols(objs, defined):
    """{file: its defined (or undefined) global symbols}, by one nm call."""
    args = ["nm", "-A", "--defined-only"] if defined else ["nm", "-A", "-u"]
    out = subprocess.run(args + objs, capture_output=True, text=True,
                         check=True).stdout
    found = {os.path.basename(o).split(".")[0]: set() for o in objs}
    for line in out.splitlines():
        path, _, rest = line.partition(":")
        r = rest.split()
        name = os.path.basename(path).split(".")[0]
        if not defined and r:
            found[name].add(r[-1])
        elif defined and len(r) == 3 and r[1] in "TDBRVW":
            found[name].add(r[2])
    return found


def file_graph(folder):
    objs = sorted(glob.glob(os.path.join(harness.BUILD, folder, "**", "*.o"),
                            recursive=True))
    if not objs:
        return {}
    owner = {s: f for f, syms in symbols(objs, True).items() for s in syms}
    return {f: {owner[s] for s in syms if s in owner and owner[s] != f}
            for f, syms in symbols(objs, False).items()}


def cycles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


class FileGraph(harness.ProfTest):
    def graph(self, folder):
        g = file_graph(folder)
        if not g:
            self.skipTest(f"no object files in {folder}")
        return g

    def test_cycle_finder_finds_one(self):
        self.assertEqual(cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}),
                         [["a", "b", "c"]])
        self.assertEqual(cycles({"a": {"b"}, "b": set()}), [])

    def test_tool_folders_are_layered(self):
        """Every call and every include between the tools' folders goes
        down TOOL_LAYERS."""
        g = tool_file_graph()
        if not g:
            self.skipTest("no object files of the tools")
        self.assertEqual(layer_violations(g), [])
        self.assertEqual(layer_violations(include_graph()), [])

    def test_layer_check_finds_an_upward_call(self):
        g = {"profdata/model/model.c": {"profdata/report/report.c"},
             "profdata/report/report.c": {"profdata/model/model.c"},
             "profdata/raw/raw.c": {"profdata/yaml/yaml_read.c"}}
        self.assertEqual(layer_violations(g),
                         ["profdata/model/model.c -> profdata/report/report.c",
                          "profdata/raw/raw.c -> profdata/yaml/yaml_read.c"])

    def test_every_tool_folder_has_a_layer(self):
        for src in tool_sources():
            folder = os.path.dirname(src)
            if not folder.startswith("hotcold"):
                with self.subTest(folder=folder):
                    layer_of(folder)

    def test_includes_are_paths_across_folders(self):
        self.assertEqual(include_problems(), [])

    def test_tool_libraries_have_no_cycles(self):
        for lib, folder in LIBS.items():
            with self.subTest(lib=lib):
                self.assertEqual(cycles(self.graph(folder)), [])

    def test_runtime_files_are_in_layers(self):
        self.graph(RUNTIME)
        self.assertEqual([f for f, i in sorted(runtime_layer_of().items()) if i < 0], [])

    def test_runtime_calls_go_down_but_for_the_hooks(self):
        self.graph(RUNTIME)
        self.assertEqual(upward_uses(os.path.join(harness.BUILD, RUNTIME)), [],
                         "(file, symbol, the higher layer's file defining it)")

    def test_runtime_includes_go_down(self):
        self.assertEqual(upward_includes(), [], "(file, header of a higher layer)")

    def test_runtime_hooks_are_used_upward(self):
        """Every listed hook is defined where the list says, and used from
        below (else it is no hook and leaves the list)."""
        g = self.graph(RUNTIME)
        layer = runtime_layer_of()
        root = os.path.join(harness.BUILD, RUNTIME)
        objs = sorted(glob.glob(os.path.join(root, "**", "*.o"), recursive=True))
        defined, used = symbols(objs, True), symbols(objs, False)
        for s, (home, _) in RUNTIME_UPWARD_HOOKS.items():
            with self.subTest(hook=s):
                self.assertIn(s, defined[home])
                self.assertTrue(any(s in used[f] and layer[f] < layer[home] for f in g))

    def test_allocator_files_are_layered(self):
        g = self.graph(RUNTIME)
        self.assertEqual(sorted(f for f in g if f.startswith("rt_heap")),
                         sorted(HEAP_ORDER))
        for i, f in enumerate(HEAP_ORDER):
            above = set(HEAP_ORDER[:i + 1])
            self.assertEqual(g[f] & above, set(), f"{f} calls a file above it")


if __name__ == "__main__":
    harness.main()
