"""Every test program compiles on its own.

The Python tests keep their C and C++ programs in a progs/ folder next to
them (test/<folder>/progs/), never inside Python strings, so that each can
be compiled, read and linted alone.  This checks that each one does:
`clang-22 -fsyntax-only` on every .c (-std=gnu11), .cc and .cpp
(-std=gnu++17) file, run in the file's folder (its own headers are found
there) with the project's public headers (include/) on the include path,
as the tests build them.  A program that a test builds with -D macros
names the values it is checked with on a comment line near its top:

    // defaults: -DNAME=alloc_a

(other flags it needs go there too).  Each file's first line is its header
comment and names the file.
"""
import concurrent.futures
import glob
import os
import re
import shlex
import subprocess
import unittest

import harness

SOURCES = (".c", ".cc", ".cpp")
STD = {".c": ["clang-22", "-std=gnu11"], ".cc": ["clang++-22", "-std=gnu++17"],
       ".cpp": ["clang++-22", "-std=gnu++17"]}


def programs():
    """Every file under test/*/progs/, sorted."""
    return sorted(p for p in glob.glob(os.path.join(harness.ROOT, "test", "*", "progs", "*"))
                  if os.path.isfile(p))


def default_flags(text):
    """The flags of the `defaults:` comment line among the first five."""
    for line in text.splitlines()[:5]:
        m = re.match(r"\s*(?://|/\*)\s*defaults:\s*(.*?)\s*(?:\*/)?\s*$", line)
        if m:
            return shlex.split(m.group(1))
    return []


def syntax_check(path):
    """(path, CompletedProcess) of clang-22 -fsyntax-only on `path`."""
    with open(path) as f:
        flags = default_flags(f.read())
    cmd = [*STD[os.path.splitext(path)[1]], "-fsyntax-only", "-w",
           "-I", os.path.join(harness.ROOT, "include"), "-I", harness.ROOT,
           *flags, os.path.basename(path)]
    return path, subprocess.run(cmd, cwd=os.path.dirname(path), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)


class ProgsCompile(unittest.TestCase):
    def test_every_program_compiles_alone(self):
        srcs = [p for p in programs() if p.endswith(SOURCES)]
        self.assertGreater(len(srcs), 50)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            for path, r in pool.map(syntax_check, srcs):
                with self.subTest(prog=os.path.relpath(path, harness.ROOT)):
                    self.assertEqual(r.returncode, 0, r.stdout)

    def test_every_program_names_itself_first(self):
        for path in programs():
            with open(path) as f:
                first = f.readline()
            with self.subTest(prog=os.path.relpath(path, harness.ROOT)):
                self.assertRegex(first, r"^\s*(/\*|//)")
                self.assertIn(os.path.basename(path), first)

    def test_defaults_are_read(self):
        self.assertEqual(default_flags("/* x.c - y */\n// defaults: -DN=3 -DM='a b'\n"),
                         ["-DN=3", "-DM=a b"])
        self.assertEqual(default_flags("// x.c\n/* defaults: -I../inc */\n"), ["-I../inc"])
        self.assertEqual(default_flags("// x.c\nint main(void) { return 0; }\n"), [])


if __name__ == "__main__":
    harness.main()
