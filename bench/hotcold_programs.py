"""bench/hotcold_programs.py: the Debian programs of bench/hotcold.py.

Owns, for each program built from a Debian source package nobody here
wrote, its sources (`apt-get source`, bench_lib.fetch_sources), the flags
and files of its build, its workload's input and command line.  A program
is an object with `name`, `title`, `argv`, `inputs` (files linked into each
run directory) and `build(flags, tag, fresh)`, the objects compiled with
those flags into obj/hotcold/<name>-<tag>/.
"""
import os
import shutil
import sys

import bench_lib as B


class Program:
    """Sources compiled with flags of the caller's plus the program's own."""
    name = title = None
    own_flags = []
    argv = []
    inputs = []

    def __init__(self, obj_dir):
        self.obj_dir = obj_dir

    def sources(self):
        raise NotImplementedError

    def validate(self, stdout):
        """Exit when a run's output shows the workload is not the intended one."""

    def build(self, flags, tag, fresh=False):
        """The objects; fresh: recompile all (the flags name a new profile)."""
        d = os.path.join(self.obj_dir, f"{self.name}-{tag}")
        if fresh:
            shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d, exist_ok=True)
        pairs = [(s, os.path.join(d, os.path.splitext(os.path.basename(s))[0] + ".o"))
                 for s in self.sources()]
        B.log(f"{self.name}: compiling {len(pairs)} files ({tag})")
        return B.compile_objs(pairs, B.CXX, [*flags, *self.own_flags])


class Jsoncpp(Program):
    """jsontestrunner (libjsoncpp) on gen_json.py's 3.6 MB document."""
    name = "jsoncpp"

    def __init__(self, obj_dir, bench_dir):
        super().__init__(obj_dir)
        self.src = B.fetch_sources(os.path.join(bench_dir, "src"),
                                   [("libjsoncpp", "libjsoncpp")])["libjsoncpp"]
        self.title = f"jsoncpp jsontestrunner ({os.path.basename(self.src)}, 3.6 MB JSON)"
        self.own_flags = ["-I" + os.path.join(self.src, "include"),
                          "-I" + os.path.join(self.src, "src", "lib_json")]
        js_in = os.path.join(bench_dir, "in.json")
        gen = os.path.join(B.BENCH_SRC, "gen_json.py")
        if B.stale(js_in, [gen]):
            B.run([sys.executable, gen, js_in])
        self.argv, self.inputs = ["in.json"], [js_in]

    def sources(self):
        lib = os.path.join(self.src, "src", "lib_json")
        return [os.path.join(lib, f) for f in ["json_reader.cpp", "json_value.cpp",
                                               "json_writer.cpp"]] + \
            [os.path.join(self.src, "src", "jsontestrunner", "main.cpp")]


# ninja's own library objects (configure.py's list for POSIX) and main.
NINJA_UNITS = ["build", "build_log", "clean", "clparser", "debug_flags", "depfile_parser",
               "deps_log", "disk_interface", "dyndep", "dyndep_parser", "edit_distance",
               "eval_env", "graph", "graphviz", "json", "lexer", "line_printer",
               "manifest_parser", "metrics", "missing_deps", "parser", "state", "status",
               "string_piece_util", "util", "version", "subprocess-posix", "ninja"]


class Ninja(Program):
    """`ninja -n` in gen_ninja.py's built tree: loads the build log and the
    deps log (kept all run, each entry read once), stats every file and
    dry-runs what one edited header makes dirty."""
    name = "ninja"

    def __init__(self, obj_dir, bench_dir, quick):
        super().__init__(obj_dir)
        self.src = B.fetch_sources(os.path.join(bench_dir, "src"),
                                   [("ninja-build", "ninja-build")])["ninja-build"]
        # configure.py's flags for a release build, without -g/-pipe/warnings.
        self.own_flags = ["-fno-rtti", "-fno-exceptions", "-fvisibility=hidden",
                          "-DNDEBUG", '-DNINJA_PYTHON="python3"']
        dirs, files = (100, 400) if quick else (200, 400)
        tree = os.path.join(bench_dir, f"ninja-tree-{dirs}x{files}")
        gen = os.path.join(B.BENCH_SRC, "gen_ninja.py")
        stamp = os.path.join(tree, ".generated")
        if B.stale(stamp, [gen]):
            B.log(f"generating the ninja tree {tree} ({dirs * files} objects)")
            shutil.rmtree(tree, ignore_errors=True)
            out = B.run([sys.executable, gen, tree, "--dirs", str(dirs), "--files", str(files)])
            with open(stamp, "w") as f:
                f.write(out)
        with open(stamp) as f:
            self.commands = int(f.read())
        self.title = (f"ninja -n ({os.path.basename(self.src)}, {dirs * files} objects, "
                      f"one header edited)")
        self.argv = ["-C", tree, "-n"]

    def sources(self):
        return [os.path.join(self.src, "src", u + ".cc") for u in NINJA_UNITS]

    def validate(self, stdout):
        """The logs were read as ninja's own: only what the edited header
        makes dirty is run (a rejected log would make everything dirty)."""
        ran = sum(1 for line in stdout.splitlines() if line.startswith("["))
        if ran != self.commands:
            sys.exit(f"bench: ninja -n ran {ran} commands, not {self.commands}: "
                     "the generated logs were not accepted")
