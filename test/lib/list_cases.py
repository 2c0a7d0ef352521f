"""list_cases.py - prints the TestCase classes of end-to-end test files,
one "FILE CLASS" line each, for test/CMakeLists.txt to register one ctest
entry per class (a class whose tests all skip then shows as skipped on
its own).

Each file is imported as a module (its tests are not run: the files run
them only under `if __name__ == "__main__"`) and unittest's loader says
which classes hold tests, inherited ones included."""
import importlib.util
import os
import sys
import unittest


def classes(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from classes(t)
        else:
            yield type(t).__name__


def cases(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    name = "case_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    seen = []
    for c in classes(unittest.defaultTestLoader.loadTestsFromModule(mod)):
        if c not in seen:
            seen.append(c)
    sys.path.pop(0)
    return seen


for p in sys.argv[1:]:
    try:
        found = cases(p)
    except Exception as e:  # the whole file as one entry: it fails there
        print(f"list_cases: {p}: {e}", file=sys.stderr)
        found = ["*"]
    for c in found:
        print(p, c)
