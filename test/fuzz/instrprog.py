#!/usr/bin/env python3
"""instrprog.py - record instrprog.c's instrumentation profiles.

    instrprog.py OUTDIR   -> OUTDIR/ir22.profraw, ir19.profraw (clang-22 and
                             clang-19 -fprofile-generate), fe22-mcdc.profraw
                             (clang-22 -fprofile-instr-generate with MC/DC),
                             ir22.indexed, fe22-mcdc.indexed (llvm-profdata-22
                             merge of those)

They seed the instrprof fuzzer (corpus/instrprof/) and the damaged-file
corpus (test/damaged/base-ir22.*).  Binary ids differ between builds, so
re-recording changes the files' bytes, not their shape.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BUILDS = {
    "ir22": ["clang-22", "-O1", "-fprofile-generate"],
    "ir19": ["clang-19", "-O1", "-fprofile-generate"],
    "fe22-mcdc": ["clang-22", "-O1", "-fprofile-instr-generate",
                  "-fcoverage-mapping", "-fcoverage-mcdc"],
}


def main():
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    for name, cmd in BUILDS.items():
        exe = os.path.join(out, "instrprog-" + name)
        subprocess.run([*cmd, "instrprog.c", "-o", exe], cwd=HERE, check=True)
        raw = os.path.join(out, name + ".profraw")
        env = dict(os.environ, LLVM_PROFILE_FILE=raw)
        subprocess.run([exe], env=env, check=True, stdout=subprocess.DEVNULL)
        if name != "ir19":
            subprocess.run(["llvm-profdata-22", "merge", raw, "-o",
                            os.path.join(out, name + ".indexed")], check=True)


if __name__ == "__main__":
    main()
