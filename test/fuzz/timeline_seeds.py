#!/usr/bin/env python3
"""timeline_seeds.py - write the fuzz_timeline seeds (corpus/timeline/):

    timeline_seeds.py OUTDIR

seed-phases.timeline and seed-phases-4threads-top2.timeline are written by
the runtime for test/timeline/progs/phases.c (one thread; four threads with
timeline_top=2), seed-peak-only.timeline with peak_snapshot=1 alone, and
seed-random.timeline by test/lib/timeline_file.py from a fixed random
seed.  Rerun it after a change of the timeline format (the build folder
is found as the tests find it, MEMPROF_BUILD_DIR or build/)."""
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "timeline"))
import harness  # noqa: E402
import timeline_file as tf  # noqa: E402
from test_timeline_format import random_timeline  # noqa: E402

PHASES = os.path.join(HERE, "..", "timeline", "progs", "phases.c")
RUNS = {"seed-phases.timeline": ("timeline=1", "1"),
        "seed-phases-4threads-top2.timeline": ("timeline=1:timeline_top=2", "4"),
        "seed-peak-only.timeline": ("peak_snapshot=1", "1")}


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = os.path.abspath(argv[1])
    os.makedirs(out, exist_ok=True)
    s = harness.Scratch("tlseeds")
    try:
        exe = harness.compile_program(s, PHASES, out="phases")
        for name, (opts, threads) in RUNS.items():
            _, raws = harness.run_program(s, exe, [threads, "20"],
                                          env={"MEMPROF_OPTIONS": opts})
            (tl,) = [p for p in raws if p.endswith(".timeline")]
            shutil.copy(tl, os.path.join(out, name))
            os.remove(tl)
        tf.write(os.path.join(out, "seed-random.timeline"), random_timeline(random.Random(1)))
    finally:
        s.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
