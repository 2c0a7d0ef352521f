# lit.cfg.py - runs LLVM's compiler-rt MemProf lit tests (kept outside this
# repository, in ../shared/llvm-memprof-lit/TestCases) against one of three
# runtimes, chosen with --param memprof_runtime=NAME:
#
#   llvm        clang-22 -fmemory-profile: LLVM 22's own runtime, the reference
#   ours-static our build/runtime/libmemprof.a, linked whole-archive
#   ours-shared our build/runtime/libmemprof.so (what -shared-libsan does)
#
# run.py drives it (one test or all); expectations.py lists, per runtime,
# the tests expected to fail or not to apply, each with its reason.
# Substitutions follow compiler-rt/test/memprof/lit.cfg.py and
# compiler-rt/test/lit.common.cfg.py for x86_64 Linux.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import expectations  # noqa: E402

params = lit_config.params
runtime = params.get("memprof_runtime", "llvm")
if runtime not in expectations.RUNTIMES:
    lit_config.fatal("memprof_runtime must be one of %s, not %r"
                     % (", ".join(expectations.RUNTIMES), runtime))
repo = os.path.dirname(os.path.dirname(here))
build_dir = os.path.abspath(params.get("build_dir", os.path.join(repo, "build")))
suite_dir = os.path.abspath(params.get(
    "suite_dir", os.path.join(repo, "..", "shared", "llvm-memprof-lit", "TestCases")))
llvm_bin = params.get("llvm_bin", "/usr/lib/llvm-22/bin")

config.name = "MemProfiler-" + runtime
config.test_source_root = suite_dir
config.test_exec_root = os.path.abspath(params.get(
    "exec_root", os.path.join(build_dir, "test", "lit", runtime)))
config.suffixes = [".c", ".cpp"]


# LLVM's tests now run under lit's internal shell (no REQUIRES: shell);
# LIT_USE_INTERNAL_SHELL=0 switches to bash as compiler-rt allows.
execute_external = os.environ.get("LIT_USE_INTERNAL_SHELL") == "0"
config.test_format = expectations.ExpectationsShTest(runtime, execute_external)
if execute_external:
    config.available_features.add("shell")

# FileCheck, not, count, split-file and llvm-profdata come from LLVM 22.
config.environment["PATH"] = os.pathsep.join(
    [llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))])

clang, clangxx = "clang-22", "clang++-22"
target_cflags = ["-m64"]
memprof_cflags = ["-fmemory-profile", "-mno-omit-leaf-frame-pointer",
                  "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls",
                  "-gline-tables-only"] + target_cflags
rt_dir = os.path.join(build_dir, "runtime")
link_script = os.path.join(here, "memprof-cc")

if runtime == "llvm":
    memprof_cc, memprof_cxx = [clang], [clangxx]
    shared_rt = None
    config.available_features.add("memprof-static-runtime")
else:
    link = "static" if runtime == "ours-static" else "shared"
    memprof_cc = [link_script, link, rt_dir, clang]
    memprof_cxx = [link_script, link, rt_dir, clangxx]
    if link == "shared":
        shared_rt = os.path.join(rt_dir, "libmemprof.so")
        config.available_features.add("memprof-dynamic-runtime")
        config.environment["LD_LIBRARY_PATH"] = rt_dir
    else:
        shared_rt = None
        config.available_features.add("memprof-static-runtime")
    config.available_features.add("memprof-ours")
    for lib in ("libmemprof.a", "libmemprof.so"):
        if not os.path.exists(os.path.join(rt_dir, lib)):
            lit_config.fatal("%s not built in %s" % (lib, rt_dir))


def invocation(cmd, flags):
    return " " + " ".join(cmd + flags) + " "


subs = [
    ("%clang_memprof ", invocation(memprof_cc, memprof_cflags)),
    ("%clangxx_memprof ", invocation(memprof_cxx, memprof_cflags)),
    ("%clang ", invocation([clang], target_cflags)),
    ("%clangxx ", invocation([clangxx], target_cflags)),
    ("%env_memprof_opts=", "env MEMPROF_OPTIONS="),
    # Every run is pinned to one CPU: see on-one-cpu.
    ("%run", os.path.join(here, "on-one-cpu")),
    ("%python", sys.executable),
    ("%libdl", "-ldl"),
    ("%fPIC", "-fPIC"),
    ("%fPIE", "-fPIE"),
    ("%pie", "-pie"),
    # lit 22 rejects %T; a test's %t lives in <exec_root>/Output.
    ("%T", os.path.join(config.test_exec_root, "Output")),
]
if shared_rt:
    subs.append(("%shared_libmemprof", shared_rt))
config.substitutions.extend(subs)

config.available_features.update(
    ["linux", "x86_64-linux", "memprof-64-bits", "fast-unwinder-works"])
