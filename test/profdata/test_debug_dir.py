"""--debug-dir: a stripped binary whose DWARF sits in a separate debug file
(DIR/.build-id/xx/rest.debug) symbolizes to the same profile as the
unstripped binary; without the debug dir nothing symbolizes and the merge
fails with a clear message.  The same debug file served by a local
debuginfod server ($DEBUGINFOD_URLS) gives the same profile."""
import ctypes.util
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import harness

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs", "inline.cc")


class DebugDir(harness.ProfTest):
    def test_separate_debug_file(self):
        s = self.scratch
        exe = harness.compile_program(s, SRC, runtime="llvm", opt="-O2")
        _, raws = harness.run_program(s, exe, args=["10"])
        full = harness.memprof_profdata("show", raws[0], f"--profiled-binary={exe}").stdout

        bid = harness.gnu_build_id(exe)
        dbgdir = s.path("debug", ".build-id", bid[:2])
        os.makedirs(dbgdir)
        harness.run(["objcopy", "--only-keep-debug", exe, os.path.join(dbgdir, bid[2:] + ".debug")])
        stripped = s.path("stripped")
        shutil.copy(exe, stripped)
        harness.run(["strip", "--strip-debug", stripped])

        got = harness.memprof_profdata("show", raws[0], f"--profiled-binary={stripped}",
                                       f"--debug-dir={s.path('debug')}").stdout
        self.assertEqual(got, full)
        self.assertIn("_ZL9inl_allocm", harness.memprof_profdata(
            "show", "--symbolized", raws[0], f"--profiled-binary={stripped}",
            "--debug-dir", s.path("debug")).stdout)

        r = harness.memprof_profdata("merge", raws[0], f"--profiled-binary={stripped}",
                                     "--debug-dir", s.path("nowhere"), "-o", s.path("o"),
                                     check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("debug info", r.stderr)
        self.assertFalse(os.path.exists(s.path("o")))


def free_port():
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


class Debuginfod(harness.ProfTest):
    def test_debug_file_from_server(self):
        if not shutil.which("debuginfod") or not ctypes.util.find_library("debuginfod"):
            self.skipTest("debuginfod or libdebuginfod is not installed "
                          "(scripts/setup.sh installs them)")
        s = self.scratch
        exe = harness.compile_program(s, SRC, runtime="llvm", opt="-O2")
        _, raws = harness.run_program(s, exe, args=["10"])
        full = harness.memprof_profdata("show", raws[0], f"--profiled-binary={exe}").stdout
        served = s.path("served")
        os.makedirs(served)
        harness.run(["objcopy", "--only-keep-debug", exe, os.path.join(served, "prog.debug")])
        stripped = s.path("stripped")
        shutil.copy(exe, stripped)
        harness.run(["strip", "--strip-debug", stripped])

        port = free_port()
        server = subprocess.Popen(["debuginfod", "-F", served, "-p", str(port),
                                   "-d", s.path("db.sqlite")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(server.wait)
        self.addCleanup(server.kill)
        url = f"http://127.0.0.1:{port}"
        probe = f"{url}/buildid/{harness.gnu_build_id(exe)}/debuginfo"
        for _ in range(150):  # the server scans the folder after it starts
            try:
                with urllib.request.urlopen(probe, timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.2)
        else:
            self.fail("debuginfod did not serve the debug file within 30 s")

        env = dict(os.environ, DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=s.path("cache"))
        r = subprocess.run([harness.profdata_tool(), "show", raws[0],
                            f"--profiled-binary={stripped}"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, full)
        env.pop("DEBUGINFOD_URLS")
        r = subprocess.run([harness.profdata_tool(), "show", raws[0],
                            f"--profiled-binary={stripped}"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("debug info", r.stderr)


if __name__ == "__main__":
    harness.main()
