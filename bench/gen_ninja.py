#!/usr/bin/env python3
"""bench/gen_ninja.py: writes a large, already built ninja build directory.

The workload of bench/hotcold.py's ninja program: `ninja -n` in this
directory loads the manifest, the build log and the deps log (an index of
every output's command hash and every object's headers, kept for the whole
run and read once per output), stats every file, finds the objects that
include one header touched since the build and dry-runs their commands.

The directory holds build.ninja (DIRS x FILES objects compiled from
src/dD/fF.c, one archive per directory, one program), empty sources,
headers and outputs with their modification times set (sources and
headers older than the outputs, the header inc/h0.h newer), and the two
logs as ninja 1.11 writes them: .ninja_log version 5 (output, mtime and
the 64-bit MurmurHash2 of the command) and .ninja_deps version 4 (path
records, then one deps record per object naming HEADERS headers, h0.h in
one object of DIRTY_EVERY).  Deterministic for given arguments.  Prints
the number of commands `ninja -n` must print: the objects including
h0.h, every archive and the program.

Usage: gen_ninja.py DIR [--dirs 200] [--files 400] [--headers 5000]
                        [--deps 20] [--dirty-every 10] [--seed 1]
"""
import argparse
import os
import random
import struct

T_SRC = 1_600_000_000_000_000_000     # ns: sources and headers
T_OUT = T_SRC + 1_000_000_000         # the outputs, one second later
T_TOUCHED = T_OUT + 1_000_000_000     # inc/h0.h, edited since the build
MASK = (1 << 64) - 1


def murmur64a(data):
    """ninja's BuildLog::LogEntry::HashCommand (MurmurHash64A, its seed)."""
    m, r = 0xc6a4a7935bd1e995, 47
    h = (0xDECAFBADDECAFBAD ^ (len(data) * m)) & MASK
    n8 = len(data) // 8 * 8
    for i in range(0, n8, 8):
        k = int.from_bytes(data[i:i + 8], "little")
        k = (k * m) & MASK
        k ^= k >> r
        k = (k * m) & MASK
        h ^= k
        h = (h * m) & MASK
    tail = data[n8:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * m) & MASK
    h ^= h >> r
    h = (h * m) & MASK
    h ^= h >> r
    return h


def touch(path, ns):
    with open(path, "w"):
        pass
    os.utime(path, ns=(ns, ns))


class DepsLog:
    """Records of .ninja_deps version 4, ids given in order of first use."""
    def __init__(self):
        self.ids = {}
        self.out = [b"# ninjadeps\n", struct.pack("<i", 4)]

    def node(self, path):
        if path not in self.ids:
            p = path.encode()
            p += b"\0" * ((4 - len(p) % 4) % 4)
            ident = len(self.ids)
            self.ids[path] = ident
            self.out.append(struct.pack("<I", len(p) + 4) + p
                            + struct.pack("<I", ~ident & 0xffffffff))
        return self.ids[path]

    def deps(self, output, mtime, inputs):
        ids = [self.node(output)] + [self.node(i) for i in inputs]
        size = 4 * (len(ids) + 2)
        rec = struct.pack("<Ii", size | 0x80000000, ids[0])
        rec += struct.pack("<II", mtime & 0xffffffff, mtime >> 32)
        self.out.append(rec + struct.pack(f"<{len(ids) - 1}i", *ids[1:]))


def generate(out_dir, args):
    rng = random.Random(args.seed)
    os.makedirs(os.path.join(out_dir, "inc"), exist_ok=True)
    headers = [f"inc/h{i}.h" for i in range(args.headers)]
    for i, h in enumerate(headers):
        touch(os.path.join(out_dir, h), T_TOUCHED if i == 0 else T_SRC)
    manifest = ["rule cc", "  command = cc -c $in -o $out", "  deps = gcc",
                "  depfile = $out.d", "rule ar", "  command = ar rcs $out $in",
                "rule link", "  command = cc $in -o $out", ""]
    log = ["# ninja log v5"]
    deps = DepsLog()
    libs = []
    dirty = 0
    for d in range(args.dirs):
        for sub in ("src", "obj"):
            os.makedirs(os.path.join(out_dir, sub, f"d{d}"), exist_ok=True)
        objs = []
        for f in range(args.files):
            src, obj = f"src/d{d}/f{f}.c", f"obj/d{d}/f{f}.o"
            touch(os.path.join(out_dir, src), T_SRC)
            touch(os.path.join(out_dir, obj), T_OUT)
            manifest.append(f"build {obj}: cc {src}")
            log.append(f"0\t1\t{T_OUT}\t{obj}\t"
                       f"{murmur64a(f'cc -c {src} -o {obj}'.encode()):x}")
            inc = rng.sample(headers[1:], args.deps - 1)
            edited = rng.randrange(args.dirty_every) == 0
            dirty += edited
            inc.append(headers[0] if edited else rng.choice(headers[1:]))
            deps.deps(obj, T_OUT, inc)
            objs.append(obj)
        lib = f"lib/d{d}.a"
        os.makedirs(os.path.join(out_dir, "lib"), exist_ok=True)
        touch(os.path.join(out_dir, lib), T_OUT)
        manifest.append(f"build {lib}: ar {' '.join(objs)}")
        log.append(f"0\t1\t{T_OUT}\t{lib}\t"
                   f"{murmur64a(('ar rcs ' + lib + ' ' + ' '.join(objs)).encode()):x}")
        libs.append(lib)
    touch(os.path.join(out_dir, "prog"), T_OUT)
    manifest += [f"build prog: link {' '.join(libs)}", "default prog", ""]
    log.append(f"0\t1\t{T_OUT}\tprog\t"
               f"{murmur64a(('cc ' + ' '.join(libs) + ' -o prog').encode()):x}")
    with open(os.path.join(out_dir, "build.ninja"), "w") as f:
        f.write("\n".join(manifest))
    with open(os.path.join(out_dir, ".ninja_log"), "w") as f:
        f.write("\n".join(log) + "\n")
    with open(os.path.join(out_dir, ".ninja_deps"), "wb") as f:
        f.write(b"".join(deps.out))
    return dirty + args.dirs + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--dirs", type=int, default=200)
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--headers", type=int, default=5000)
    ap.add_argument("--deps", type=int, default=20)
    ap.add_argument("--dirty-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(generate(args.out, args))


if __name__ == "__main__":
    main()
