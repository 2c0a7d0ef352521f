"""Temporary allocations (heaptrack's "temporary": a block its thread
frees before allocating again), counted per context in the runtime's
note (docs/raw-format.md, section 7).

progs/temporaries.c gives each context its own size and knows how many of
its blocks are temporary: alloc-free loops on the main thread and on two
threads at once (each thread's own last block), a run of blocks freed in
allocation order (only the last one), pairs freed in order (only the
second), a realloc that moves (the new block), blocks freed by another
thread and a block live at exit (none).  The text report lists them.  Under sampling the blocks in
between are mostly not seen, so the table is empty."""
import os
import re
import struct

import harness

HERE = os.path.dirname(os.path.abspath(__file__))

# MinSize -> (AllocCount, temporaries)
EXPECTED = {8: (1, 0), 16: (10, 10), 24: (10000, 10000), 32: (100, 1),
            40: (2, 0), 64: (1000, 1000), 128: (10, 0), 200: (1, 0),
            100000: (1, 1)}


class Temporaries(harness.ProfTest):
    def build(self):
        exe = self.scratch.path("temporaries")
        harness.run(["clang-22", "-O1", "-g", "-pthread", "-fno-omit-frame-pointer",
                     "-fno-optimize-sibling-calls",
                     os.path.join(HERE, "progs", "temporaries.c"), "-o", exe])
        return exe

    def profile(self, exe, options=""):
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        if options:
            env["MEMPROF_OPTIONS"] = options
        _, raws = harness.run_program(self.scratch, exe, env=env)
        (prof,) = harness.read_raw(raws[-1])
        return prof

    def test_exact_counts(self):
        prof = self.profile(self.build())
        temps = prof["note"]["temporaries"]
        got = {}
        for sid, m in prof["mibs"].items():
            if m["MinSize"] in EXPECTED:
                self.assertNotIn(m["MinSize"], got, "one context per size")
                got[m["MinSize"]] = (m["AllocCount"], temps.get(sid, 0))
        self.assertEqual(got, EXPECTED)
        # only contexts with temporaries are listed, each a MIB's stack
        self.assertTrue(set(temps) <= set(prof["mibs"]))
        self.assertNotIn(0, temps.values())

    def test_report(self):
        """The text report's section: the total over the contexts, then
        each context with the share of its allocations."""
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        _, raws = harness.run_program(self.scratch, self.build(), env=env)
        out = harness.memprof_profdata("report", raws[-1], "--top=2").stdout
        total = sum(t for _, t in EXPECTED.values())
        self.assertRegex(out, r"\nTemporary allocations \(freed before their thread "
                              rf"allocated again\): {total} of \d+ \(\S+%\), in 5 contexts\n")
        rows = re.findall(r"^ +(\d) +(\d+) +(\S+)% +(\d+) +\S+ \S+\n +(\w+) .*\n +(\w+)",
                          out.split("\nTemporary allocations", 1)[1], re.M)
        self.assertEqual(rows, [("1", "10000", "100.0", "10000", "at", "worker"),
                                ("2", "1000", "100.0", "1000", "at", "main")])

    def test_damaged_note_refused(self):
        """The reader checks the note's tables: an unknown stack id, and
        tables that do not fill the note's size."""
        exe = self.build()
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        _, raws = harness.run_program(self.scratch, exe, env=env)
        with open(raws[-1], "rb") as f:
            data = bytearray(f.read())
        prof = harness.read_raw(raws[-1])[0]
        note_at = data.rfind(struct.pack("<Q", harness.RAW_NOTE_MAGIC))
        size = struct.unpack_from("<Q", data, note_at + 8)[0]
        n = len(prof["note"]["temporaries"])
        first_id = note_at + size - 16 * n  # the first (stack id, count)
        cases = {
            "bad-id": (first_id, 0xDEAD,
                       "temporary allocations for stack id 0x000000000000dead, "
                       "which is in no stack table"),
            "short": (note_at + 8, size - 16,
                      "its table of temporary allocations does not fill the note"),
        }
        for name, (off, value, message) in cases.items():
            with self.subTest(case=name):
                bad = bytearray(data)
                struct.pack_into("<Q", bad, off, value)
                path = self.scratch.path(name + ".profraw")
                with open(path, "wb") as f:
                    f.write(bad)
                r = harness.memprof_profdata("report", path, check=False)
                self.assertEqual(r.returncode, 1)
                self.assertIn(message, r.stderr)

    def test_sampled_has_none(self):
        prof = self.profile(self.build(), "sample_interval=4096")
        self.assertEqual(prof["note"]["sample_interval"], 4096)
        self.assertEqual(prof["note"]["temporaries"], {})


if __name__ == "__main__":
    harness.main()
