"""bench/bench_programs.py: the programs of the runtime benchmark.

Owns what each program is: which Debian source package it comes from, how
its objects are compiled (once, instrumented with clang-22 -fmemory-profile)
and linked three ways (bench_lib.link_variants), and the command line and
input files of its workload. bench.py runs and reports them.
"""
import os
import shutil
import sys
from collections import namedtuple

import bench_lib as B
from bench_lib import log

# (apt source package, unpacked directory prefix)
SOURCES = [("sqlite3", "sqlite3"), ("libjsoncpp", "libjsoncpp"),
           ("leveldb", "leveldb"), ("lua5.4", "lua5.4")]

# key: short name (--programs, summary table); title: the section heading;
# exes: {variant: path or None}; tail: arguments; inputs: files symlinked
# into each run directory.
Workload = namedtuple("Workload", "key title exes tail inputs")

INSTRUMENT = ["-O2", "-g", "-fmemory-profile"]
# The same programs built for instrumentation PGO (bench_pgo.py): the
# build_* functions take the flags and an object-directory suffix.
PGO_INSTRUMENT = ["-O2", "-g", "-fprofile-generate"]


def gen_dir(cfg, name):
    """A directory of generated headers for one program's build."""
    d = os.path.join(cfg.obj, name, "gen")
    os.makedirs(d, exist_ok=True)
    return d


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def compile_all(cfg, name, srcs, cc, flags, tag=""):
    return B.compile_objs([(s, os.path.join(cfg.obj, name + tag, obj_name(s)))
                           for s in srcs], cc, flags)


def obj_name(src):
    """dir_file.o, so same-named files of two directories do not collide."""
    parent = os.path.basename(os.path.dirname(src))
    return f"{parent}_{os.path.splitext(os.path.basename(src))[0]}.o"


# ---- sqlite3 speedtest1 ----------------------------------------------------

def build_sqlite(cfg, srcdir, instrument=INSTRUMENT, tag=""):
    amal = os.path.join(cfg.bench_dir, "sqlite-amal")
    c = os.path.join(amal, "sqlite3.c")
    if not os.path.exists(c):
        os.makedirs(amal, exist_ok=True)
        log("building the sqlite3 amalgamation (configure + make sqlite3.c)")
        B.run([os.path.join(srcdir, "configure"), "--disable-tcl"], cwd=amal)
        B.run(["make", "sqlite3.c"], cwd=amal)
    flags = [*instrument, "-I" + amal, "-DSQLITE_OMIT_LOAD_EXTENSION"]
    return compile_all(cfg, "sqlite", [c, os.path.join(srcdir, "test", "speedtest1.c")],
                       B.CC, flags, tag)


def sqlite_workload(cfg, srcdir, bench_objs, lib_ours):
    exes = B.link_variants(build_sqlite(cfg, srcdir), os.path.join(cfg.obj, "speedtest1"),
                           bench_objs, lib_ours, cxx=False)
    size = "15" if cfg.quick else "40"
    return Workload("sqlite", "sqlite3 speedtest1 --size " + size, exes,
                    ["--size", size, "--memdb"], [])


# ---- jsoncpp jsontestrunner ------------------------------------------------

def build_jsoncpp(cfg, srcdir, instrument=INSTRUMENT, tag=""):
    flags = [*instrument, "-I" + os.path.join(srcdir, "include"),
             "-I" + os.path.join(srcdir, "src", "lib_json")]
    srcs = [os.path.join(srcdir, "src", "lib_json", f)
            for f in ["json_reader.cpp", "json_value.cpp", "json_writer.cpp"]]
    srcs.append(os.path.join(srcdir, "src", "jsontestrunner", "main.cpp"))
    return compile_all(cfg, "jsoncpp", srcs, B.CXX, flags, tag)


def jsoncpp_workload(cfg, srcdir, bench_objs, lib_ours):
    js_in = os.path.join(cfg.bench_dir, "in.json")
    gen = os.path.join(B.BENCH_SRC, "gen_json.py")
    if B.stale(js_in, [gen]):
        B.run([sys.executable, gen, js_in])
    exes = B.link_variants(build_jsoncpp(cfg, srcdir),
                           os.path.join(cfg.obj, "jsontestrunner"), bench_objs, lib_ours)
    return Workload("jsoncpp", "jsoncpp jsontestrunner (3.6 MB JSON)", exes,
                    ["in.json"], [js_in])


# ---- the generated deep-stack program --------------------------------------

def build_deep(cfg):
    """The generated deep-stack program (also section 2's profiled program)."""
    d = os.path.join(cfg.obj, "deep")
    os.makedirs(d, exist_ok=True)
    cpp = os.path.join(d, "deep.cpp")
    gen = os.path.join(B.BENCH_SRC, "gen_deep.py")
    if B.stale(cpp, [gen]):
        B.run([sys.executable, gen, cpp])
    return [B.compile_obj(cpp, os.path.join(d, "deep.o"), B.CXX,
                          ["-O2", *B.PROFILE_FLAGS])]


def deep_workload(cfg, bench_objs, lib_ours):
    exes = B.link_variants(build_deep(cfg), os.path.join(cfg.obj, "deep"),
                           bench_objs, lib_ours)
    allocs = "30000" if cfg.quick else "100000"
    return Workload("deep-stack",
                    f"deep-stack generated ({allocs} allocations, pool of 30000 contexts)",
                    exes, ["7", allocs], [])


# ---- leveldb db_bench ------------------------------------------------------

# What leveldb's CMake would detect on Debian amd64 without the optional
# crc32c and snappy libraries (port/port_config.h.in).
LEVELDB_PORT_CONFIG = """#define HAVE_FDATASYNC 1
#define HAVE_FULLFSYNC 0
#define HAVE_O_CLOEXEC 1
#define HAVE_CRC32C 0
#define HAVE_SNAPPY 0
"""

# db_bench's own phases, without fillsync (an fsync per write) and the
# crc32c/snappy microbenchmarks, which allocate nothing.
LEVELDB_BENCHMARKS = ("fillseq,fillrandom,overwrite,readrandom,readseq,"
                      "readreverse,seekrandom,deleterandom")


def leveldb_sources(srcdir):
    srcs = []
    for sub in ["db", "table", "util"]:
        d = os.path.join(srcdir, sub)
        for f in sorted(os.listdir(d)):
            if (f.endswith(".cc") and not f.endswith("_test.cc")
                    and f not in ("env_windows.cc", "leveldbutil.cc")):
                srcs.append(os.path.join(d, f))
    srcs.append(os.path.join(srcdir, "benchmarks", "db_bench.cc"))
    return srcs


def build_leveldb(cfg, srcdir, instrument=INSTRUMENT, tag=""):
    """db_bench and the library. db_bench.cc includes util/testutil.h, which
    includes the gmock and gtest headers (libgmock-dev); nothing from their
    libraries is referenced, so none is linked."""
    gen = gen_dir(cfg, "leveldb")
    write_if_changed(os.path.join(gen, "port", "port_config.h"), LEVELDB_PORT_CONFIG)
    flags = [*instrument, "-std=c++17", "-DNDEBUG", "-DLEVELDB_PLATFORM_POSIX=1",
             "-DLEVELDB_HAS_PORT_CONFIG_H=1", "-I" + gen, "-I" + srcdir,
             "-I" + os.path.join(srcdir, "include")]
    return compile_all(cfg, "leveldb", leveldb_sources(srcdir), B.CXX, flags, tag)


def db_dir(cfg):
    """Where db_bench keeps its database: tmpfs when there is one, so that
    table files' fsyncs and disk writes do not add the disk's noise."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else cfg.work
    return os.path.join(base, f"memprof-bench-leveldb.{os.getpid()}")


def leveldb_workload(cfg, srcdir, bench_objs, lib_ours):
    exes = B.link_variants(build_leveldb(cfg, srcdir), os.path.join(cfg.obj, "db_bench"),
                           bench_objs, lib_ours)
    num = "30000" if cfg.quick else "80000"
    return Workload("leveldb", f"leveldb db_bench --num={num}", exes,
                    [f"--num={num}", f"--benchmarks={LEVELDB_BENCHMARKS}",
                     f"--db={db_dir(cfg)}"], [])


def cleanup(cfg):
    shutil.rmtree(db_dir(cfg), ignore_errors=True)


# ---- lua5.4 running bench/lua_compile.lua ----------------------------------

def build_lua(cfg, srcdir, instrument=INSTRUMENT, tag=""):
    gen = gen_dir(cfg, "lua")
    # Debian's luaconf.h patch includes a header its build generates.
    write_if_changed(os.path.join(gen, "lua5.4-deb-multiarch.h"),
                     '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n')
    src = os.path.join(srcdir, "src")
    srcs = [os.path.join(src, f) for f in sorted(os.listdir(src))
            if f.endswith(".c") and f != "luac.c"]
    flags = [*instrument, "-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX", "-I" + gen]
    return compile_all(cfg, "lua", srcs, B.CC, flags, tag)


def lua_workload(cfg, srcdir, bench_objs, lib_ours):
    exes = B.link_variants(build_lua(cfg, srcdir), os.path.join(cfg.obj, "lua"),
                           bench_objs, lib_ours, cxx=False)
    script = os.path.join(B.BENCH_SRC, "lua_compile.lua")
    rounds = "3" if cfg.quick else "8"
    return Workload("lua", f"lua5.4 lua_compile.lua {rounds} (toy compiler, "
                    "tables and strings)", exes, ["lua_compile.lua", rounds], [script])


# ---- all of them -------------------------------------------------------------

KEYS = ["sqlite", "jsoncpp", "deep-stack", "leveldb", "lua"]


def workloads(cfg, dirs, bench_objs, lib_ours, keys=None):
    """(key, build) for the programs named in keys (all by default), in KEYS
    order; build() compiles and links one and returns its Workload."""
    makers = {
        "sqlite": lambda: sqlite_workload(cfg, dirs["sqlite3"], bench_objs, lib_ours),
        "jsoncpp": lambda: jsoncpp_workload(cfg, dirs["libjsoncpp"], bench_objs, lib_ours),
        "deep-stack": lambda: deep_workload(cfg, bench_objs, lib_ours),
        "leveldb": lambda: leveldb_workload(cfg, dirs["leveldb"], bench_objs, lib_ours),
        "lua": lambda: lua_workload(cfg, dirs["lua5.4"], bench_objs, lib_ours),
    }
    return [(k, makers[k]) for k in KEYS if keys is None or k in keys]


def bench_objs(cfg):
    """(floor_rt.o, exit_stamp.o): what every workload's executables link
    with besides their own objects (bench_lib.link_variants)."""
    return (B.compile_obj(os.path.join(B.BENCH_SRC, "floor_rt.c"),
                          os.path.join(cfg.obj, "floor_rt.o"), B.CC, ["-O2"]),
            B.compile_obj(os.path.join(B.BENCH_SRC, "exit_stamp.c"),
                          os.path.join(cfg.obj, "exit_stamp.o"), B.CC, ["-O2"]))


def built_workloads(cfg, lib_ours, keys=None):
    """Fetches the sources and yields (key, Workload) for the programs named
    in keys (all by default), built one at a time, in KEYS order; a program
    that does not build yields (key, None) and its error is logged, so the
    others' figures stand.  Removes leveldb's database after each program."""
    dirs = B.fetch_sources(os.path.join(cfg.bench_dir, "src"), SOURCES)
    objs = bench_objs(cfg)
    for key, build in workloads(cfg, dirs, objs, lib_ours, keys):
        try:
            w = build()
        except RuntimeError as e:
            log(f"{key}: build failed: {str(e)[-600:]}")
            w = None
        try:
            yield key, w
        finally:
            cleanup(cfg)
