"""`cmake --install` lays out headers, libraries, the tool and memprof.pc,
and the pkg-config flags are the ones users need to link the runtime."""
import os

import harness


def norm(arg):
    """Normalize the path inside a flag (pkg-config keeps ${pcfiledir}/../..)."""
    for pre in ("-Wl,--dynamic-list=", "-I", ""):
        if arg.startswith(pre + "/"):
            return pre + os.path.normpath(arg[len(pre):])
    return arg


class InstallTest(harness.ProfTest):
    def test_install_layout_and_pkg_config(self):
        prefix = self.scratch.path("prefix")
        harness.run(["cmake", "--install", harness.BUILD, "--prefix", prefix])
        libdir = next(d for d in ("lib", "lib64", "lib/x86_64-linux-gnu")
                      if os.path.exists(os.path.join(prefix, d, "libmemprof.a")))
        for rel in (f"{libdir}/libmemprof.a", f"{libdir}/libmemprof.so",
                    "bin/memprof-profdata", "include/memprof/memprof_interface.h",
                    "include/memprof/MIBDef.inc", "include/memprof/memprof_format.h",
                    f"{libdir}/pkgconfig/memprof.pc", f"{libdir}/memprof.syms"):
            self.assertTrue(os.path.isfile(os.path.join(prefix, rel)), rel)
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, libdir, "pkgconfig"))
        libs = [norm(a) for a in
                harness.run(["pkg-config", "--libs", "memprof"], env=env).stdout.split()]
        self.assertEqual(libs, ["-Wl,--whole-archive", f"{prefix}/{libdir}/libmemprof.a",
                                "-Wl,--no-whole-archive", f"-Wl,--dynamic-list={prefix}/{libdir}/memprof.syms",
                                "-lpthread", "-ldl", "-lm"])
        cflags = [norm(a) for a in
                  harness.run(["pkg-config", "--cflags", "memprof"], env=env).stdout.split()]
        self.assertIn("-fmemory-profile", cflags)
        self.assertIn(os.path.normpath(f"-I{prefix}/include/memprof"), cflags)


if __name__ == "__main__":
    harness.main()
