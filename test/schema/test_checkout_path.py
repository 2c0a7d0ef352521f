"""test_checkout_path.py - the build does not depend on where the checkout is.

The CMake files choose sources by globbing folders and filtering folder
names (profdata's check/ and tool/, the fuzzers' report files).  A filter
that looks at the whole path also matches the checkout's own folders: a
clone under /.../check/ once lost every profdata source ("Cannot determine
link language for target memprof_profdata_core").  This copies the
project's files under a path made of those folder names and configures it
as CI does (the default build, and the fuzz build when clang-22 is there),
then checks that each library gets exactly the sources its folder holds."""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import harness

# Folder names the CMake files filter on, all in the checkout's path.
HOSTILE = os.path.join("check", "tool", "report_x.c", "profdata", "memprof")


def project_files(root):
    """The checkout's files: git's list when it is a repository, else every
    file outside build folders."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
        return [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(("build", "."))]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files


def compiled_sources(src, build, target_dir):
    """The sources under src/profdata/ listed in a target's DependInfo.cmake,
    relative to that folder."""
    path = os.path.join(build, target_dir, "DependInfo.cmake")
    with open(path) as f:
        text = f.read()
    prefix = os.path.join(src, "profdata") + "/"
    return sorted({p[len(prefix):] for p in re.findall(r'"([^"]+\.c)"', text)
                   if p.startswith(prefix)})


def expected_sources(src, exclude):
    return sorted(os.path.relpath(p, os.path.join(src, "profdata"))
                  for p in glob.glob(os.path.join(src, "profdata", "*", "*.c"))
                  if not re.match(exclude, os.path.relpath(
                      p, os.path.join(src, "profdata"))))


class CheckoutPath(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.src = os.path.join(cls.tmp.name, HOSTILE)
        for rel in project_files(harness.ROOT):
            if not os.path.isfile(os.path.join(harness.ROOT, rel)):
                continue  # deleted in the work tree, not yet in git
            dst = os.path.join(cls.src, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(harness.ROOT, rel), dst)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def configure(self, name, *args):
        build = os.path.join(self.tmp.name, name)
        r = subprocess.run(["cmake", "-S", self.src, "-B", build, *args],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        return build

    def test_default_build(self):
        build = self.configure("build")
        got = compiled_sources(self.src, build,
                               "profdata/CMakeFiles/memprof_profdata_core.dir")
        want = expected_sources(self.src, r"tool/main\.c$|check/")
        self.assertEqual(got, want)
        self.assertIn("model/model.c", got)
        self.assertNotIn("tool/main.c", got)

    def test_fuzz_build(self):
        if not shutil.which("clang-22"):
            self.skipTest("clang-22 not installed: the fuzz build needs it")
        build = self.configure("build-fuzz", "-DCMAKE_C_COMPILER=clang-22",
                               "-DMEMPROF_FUZZ=ON")
        got = compiled_sources(self.src, build,
                               "test/fuzz/CMakeFiles/memprof_fuzz_core.dir")
        want = expected_sources(self.src, r"(tool|check)/|.*/report[^/]*\.c$")
        self.assertEqual(got, want)
        self.assertIn("raw/raw.c", got)


if __name__ == "__main__":
    harness.main()
