#!/usr/bin/env python3
"""seedprog.py - build seedprog.c reproducibly and record its raw profiles.

    seedprog.py build OUTDIR          -> OUTDIR/seedprog22, seedprog19,
                                         seedprog22h (histogram mode)
    seedprog.py profile OUTDIR        -> also OUTDIR/seed-v5.profraw (LLVM 22
                                         runtime), seed-v4.profraw (LLVM 19),
                                         seed-v3.profraw (v4 converted),
                                         seed-v5-hist.profraw, seed-v5-2dumps

The binaries are built from this folder with -ffile-prefix-map, so their
build ids do not depend on where the tree or the build folder lives: the
checked-in corpus files refer to them.
"""
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS = ["-g", "-O0", "-fmemory-profile", "-fno-omit-frame-pointer",
         "-mno-omit-leaf-frame-pointer", "-fno-optimize-sibling-calls",
         f"-ffile-prefix-map={HERE}=/memprof-fuzz"]


def build(outdir):
    os.makedirs(outdir, exist_ok=True)
    bins = {}
    for v, extra in ((22, []), (19, []), ("22h", ["-mllvm", "-memprof-histogram"])):
        exe = os.path.join(os.path.abspath(outdir), f"seedprog{v}")
        cc = "clang-19" if v == 19 else "clang-22"
        subprocess.run([cc, *FLAGS, *extra, "seedprog.c", "-o", exe],
                       cwd=HERE, check=True)
        bins[v] = exe
    return bins


def record(exe, outdir):
    """Run exe in outdir; return the bytes of the one profile it wrote."""
    for f in os.listdir(outdir):
        if f.startswith("memprof.profraw"):
            os.unlink(os.path.join(outdir, f))
    env = dict(os.environ)
    env.pop("MEMPROF_OPTIONS", None)
    subprocess.run([exe], cwd=outdir, env=env, check=False)
    profs = [f for f in os.listdir(outdir) if f.startswith("memprof.profraw")]
    assert len(profs) == 1, profs
    path = os.path.join(outdir, profs[0])
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return data


def v4_to_v3(data):
    """Rewrite a histogram-free v4 dump as v3: MIBs lose their last 12
    bytes, the MIB table is padded to 8, offsets and TotalSize follow."""
    magic, ver, total, seg, mib, stk = struct.unpack_from("<6Q", data, 0)
    assert ver in (4, 5)
    segs = data[seg:mib]
    (n,) = struct.unpack_from("<Q", data, mib)
    out = bytearray(struct.pack("<Q", n))
    p = mib + 8
    for _ in range(n):
        hs, = struct.unpack_from("<I", data, p + 8 + 132)
        assert hs == 0, "v3 has no histograms"
        out += data[p:p + 8 + 132]
        p += 8 + 144
    while len(out) % 8:
        out += b"\0"
    stacks = data[stk:total]
    mib3 = 48 + len(segs)
    stk3 = mib3 + len(out)
    total3 = stk3 + len(stacks)
    return struct.pack("<6Q", magic, 3, total3, 48, mib3, stk3) + segs + bytes(out) + stacks


def profile(outdir):
    bins = build(outdir)
    v5 = record(bins[22], outdir)
    v4 = record(bins[19], outdir)
    files = {"seed-v5.profraw": v5, "seed-v4.profraw": v4,
             "seed-v5-hist.profraw": record(bins["22h"], outdir),
             "seed-v5-2dumps.profraw": v5 + v5,
             "seed-v3.profraw": v4_to_v3(v4)}
    for name, data in files.items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
    return bins


if __name__ == "__main__":
    {"build": build, "profile": profile}[sys.argv[1]](sys.argv[2])
