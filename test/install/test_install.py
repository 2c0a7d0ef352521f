"""`cmake --install` lays out headers, libraries, the tool, memprof.pc and
memprof-hotcold.pc, and the pkg-config flags are the ones users need to
link the runtime, and libmemprof-hotcold."""
import os

import harness


def norm(arg):
    """Normalize the path inside a flag (pkg-config keeps ${pcfiledir}/../..)."""
    for pre in ("-Wl,--dynamic-list=", "-I", ""):
        if arg.startswith(pre + "/"):
            return pre + os.path.normpath(arg[len(pre):])
    return arg


class InstallTest(harness.ProfTest):
    def test_products_at_the_top_of_the_build_folder(self):
        """The build contract: the products are reachable at build/NAME."""
        for name, built in (("libmemprof.a", "runtime"), ("libmemprof.so", "runtime"),
                            ("memprof-profdata", "profdata"),
                            ("libmemprof-hotcold.a", "hotcold"),
                            ("libmemprof-hotcold.so", "hotcold")):
            top = os.path.join(harness.BUILD, name)
            self.assertTrue(os.path.isfile(top), top)
            self.assertTrue(os.path.samefile(top, os.path.join(harness.BUILD, built, name)))
        r = harness.run([os.path.join(harness.BUILD, "memprof-profdata"), "--version"],
                        check=False)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_install_layout_and_pkg_config(self):
        prefix = self.scratch.path("prefix")
        harness.run(["cmake", "--install", harness.BUILD, "--prefix", prefix])
        libdir = next(d for d in ("lib", "lib64", "lib/x86_64-linux-gnu")
                      if os.path.exists(os.path.join(prefix, d, "libmemprof.a")))
        for rel in (f"{libdir}/libmemprof.a", f"{libdir}/libmemprof.so",
                    "bin/memprof-profdata", "include/memprof/memprof_interface.h",
                    f"{libdir}/pkgconfig/memprof.pc", f"{libdir}/memprof.syms"):
            self.assertTrue(os.path.isfile(os.path.join(prefix, rel)), rel)
        # only the public API is installed, none of the shared internals
        self.assertEqual(sorted(os.listdir(os.path.join(prefix, "include", "memprof"))),
                         ["memprof_hotcold.h", "memprof_interface.h"])
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, libdir, "pkgconfig"))
        libs = [norm(a) for a in
                harness.run(["pkg-config", "--libs", "memprof"], env=env).stdout.split()]
        self.assertEqual(libs, ["-fno-sanitize-link-runtime",
                                "-Wl,--whole-archive", f"{prefix}/{libdir}/libmemprof.a",
                                "-Wl,--no-whole-archive", f"-Wl,--dynamic-list={prefix}/{libdir}/memprof.syms",
                                "-lpthread", "-ldl", "-lm"])
        cflags = [norm(a) for a in
                  harness.run(["pkg-config", "--cflags", "memprof"], env=env).stdout.split()]
        self.assertIn("-fmemory-profile", cflags)
        self.assertIn(os.path.normpath(f"-I{prefix}/include/memprof"), cflags)
        self.one_line_build(env)

    def test_build_tree_pkg_config(self):
        """PKG_CONFIG_PATH=build/pkgconfig works before installing: every
        path it gives exists, and the one-line build links and profiles."""
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(harness.BUILD, "pkgconfig"))
        for pc in ("memprof", "memprof-hotcold"):
            if pc == "memprof-hotcold" and not os.path.exists(
                    os.path.join(harness.BUILD, "libmemprof-hotcold.a")):
                continue
            flags = harness.run(["pkg-config", "--cflags", "--libs", pc], env=env).stdout.split()
            for f in flags:
                for pre in ("-I", "-Wl,--dynamic-list=", ""):
                    if f.startswith(pre + "/"):
                        self.assertTrue(os.path.exists(f[len(pre):]), f"{pc}: {f}")
        self.one_line_build(env)

    def one_line_build(self, env):
        """`clang++-22 $(pkg-config --cflags --libs memprof) t.cc`: the
        program is instrumented, links our runtime and not LLVM's beside
        it, and writes a profile the tool reads."""
        src = self.scratch.path("t.cc")
        with open(src, "w") as f:
            f.write("#include <memory>\nint main() { auto p = std::make_unique<int[]>(1000);"
                    " p[3] = 1; return p[3] - 1; }\n")
        flags = harness.run(["pkg-config", "--cflags", "--libs", "memprof"], env=env).stdout.split()
        exe = self.scratch.path("t")
        harness.run(["clang++-22", "-g", *flags, src, "-o", exe])
        syms = harness.run(["nm", exe]).stdout
        self.assertIn("__memprof_init", syms)
        self.assertNotIn("_ZN9__memprof19InitializeAllocatorEv", syms)  # LLVM's runtime
        _, raws = harness.run_program(self.scratch, exe)
        self.assertEqual(len(raws), 1)
        r = harness.memprof_profdata("show", raws[0], f"--profiled-binary={exe}")
        self.assertRegex(r.stdout, r"TotalSize: +4000\n")

    def test_install_hotcold_and_link_with_pkg_config(self):
        try:
            harness.find_built("libmemprof-hotcold.a")
        except FileNotFoundError:
            self.skipTest("libmemprof-hotcold not built (libjemalloc-dev missing)")
        prefix = self.scratch.path("prefix")
        harness.run(["cmake", "--install", harness.BUILD, "--prefix", prefix])
        libdir = next(d for d in ("lib", "lib64", "lib/x86_64-linux-gnu")
                      if os.path.exists(os.path.join(prefix, d, "libmemprof-hotcold.a")))
        for rel in (f"{libdir}/libmemprof-hotcold.a", f"{libdir}/libmemprof-hotcold.so",
                    "include/memprof/memprof_hotcold.h",
                    f"{libdir}/pkgconfig/memprof-hotcold.pc"):
            self.assertTrue(os.path.isfile(os.path.join(prefix, rel)), rel)
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, libdir, "pkgconfig"))
        flags = harness.run(["pkg-config", "--cflags", "--libs", "memprof-hotcold"],
                            env=env).stdout.split()
        self.assertEqual([norm(a) for a in flags if not a.startswith("-I")],
                         ["-Wl,--whole-archive", f"{prefix}/{libdir}/libmemprof-hotcold.a",
                          "-Wl,--no-whole-archive", "-lpthread", "-ldl", "-lm"])
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hotcold_pc.c")
        exe = self.scratch.path("hc")
        harness.run(["clang-22", src, "-o", exe, *flags])
        r, _ = harness.run_program(self.scratch, exe)
        self.assertEqual(r.stdout.decode(), "1 0\n")


if __name__ == "__main__":
    harness.main()
