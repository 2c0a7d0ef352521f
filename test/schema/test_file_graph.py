"""test_file_graph.py - no cycles between files.

A file depends on another when its object file uses a function or global
the other defines (`nm`).  The tool's libraries (profdata, symbolizer,
common) and the hot/cold allocator must have no cycle.  In the runtime,
lazy start-up (everything may call mp_init_core, which starts everything)
and the locks (leaving the last lock merges the MIBs parked meanwhile)
tie most files together by design; the allocator's own files must still
call only the ones below them, in the order rt_heap_priv.h lists."""
import glob
import os
import subprocess
import unittest

import harness

LIBS = {
    "profdata": "profdata/CMakeFiles/memprof_profdata_core.dir",
    "symbolizer": "symbolizer/CMakeFiles/memprof_symbolizer.dir",
    "common": "common/CMakeFiles/memprof_common.dir",
    "hotcold": "hotcold/CMakeFiles/memprof_hotcold_objs.dir",
}
RUNTIME = "runtime/CMakeFiles/memprof_rt_objs.dir"
# Top to bottom, as rt_heap_priv.h's file comment lists them.
HEAP_ORDER = ["rt_heap", "rt_heap_tcache", "rt_heap_nested", "rt_heap_central",
              "rt_heap_populate", "rt_heap_libc", "rt_heap_layout"]


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
    objs = sorted(glob.glob(os.path.join(harness.BUILD, folder, "*.o")))
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

    def test_tool_libraries_have_no_cycles(self):
        for lib, folder in LIBS.items():
            with self.subTest(lib=lib):
                self.assertEqual(cycles(self.graph(folder)), [])

    def test_allocator_files_are_layered(self):
        g = self.graph(RUNTIME)
        self.assertEqual(sorted(f for f in g if f.startswith("rt_heap")),
                         sorted(HEAP_ORDER))
        for i, f in enumerate(HEAP_ORDER):
            above = set(HEAP_ORDER[:i + 1])
            self.assertEqual(g[f] & above, set(), f"{f} calls a file above it")


if __name__ == "__main__":
    harness.main()
