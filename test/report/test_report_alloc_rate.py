"""Allocations per second over time (docs/timeline-format.md section 7,
docs/memprof-profdata.md "Timelines"), for a program libmemprof.so is
preloaded into: progs/schedule.c makes 1000, 3000, 500 and 2000
malloc/free pairs, 150 ms apart, under timeline_interval_ms=100.  Each
phase's first malloc takes a census that counts itself, so the censuses
count exactly [1, 1000, 3000, 500, 1999] allocations (the program makes no
other), summing to the file's TotalAllocs and the raw profile's
AllocCount.  The text report's "Allocations over time" table has those
counts with the rate count / length of each interval (lengths from the
censuses' times), and the HTML page's data and its panel (in headless
Chromium, skipped visibly without it) the same.  StartTime: the times
count from the process's start the runtime records."""
import json
import os
import re
import subprocess
import time
import unittest

import harness
import report_common as rc
import timeline_file as tf

SRC = os.path.join(rc.HERE, "progs", "schedule.c")
COUNTS = [1, 1000, 3000, 500, 1999]


def page_data(page):
    with open(page) as f:
        return json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>',
                                    f.read(), re.S).group(1))


def rate_rows(text):
    """The rows of "Allocations over time": (from, to, allocations, rate)."""
    body = text.split("Allocations over time", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\s+([\d.]+ m?s)\s+([\d.]+ m?s)\s+(\d+)\s+(\S+)\s+\d+$", body, re.M)


class AllocRate(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("report-rate")
        exe = cls.shared.path("schedule")
        harness.run(["clang-22", "-O1", "-g", SRC, "-o", exe])
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so"),
               "MEMPROF_OPTIONS": f"log_path={cls.shared.path('s')}:timeline=1:"
                                  "timeline_interval_ms=100"}
        harness.run([exe], env=env)
        (cls.raw,) = [cls.shared.path(f) for f in os.listdir(cls.shared.dir)
                      if f.startswith("s.") and not f.endswith(".timeline")]
        cls.tl = tf.read(cls.raw + ".timeline")

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    def test_counts_per_interval(self):
        self.assertEqual([c["allocs"] for c in self.tl["census"]], COUNTS)
        self.assertEqual(self.tl["total_allocs"], sum(COUNTS))
        prof = harness.read_raw(self.raw)[0]
        self.assertEqual(sum(m["AllocCount"] for m in prof["mibs"].values()), sum(COUNTS))
        # the pauses are longer than the interval: one census per phase
        times = [c["t_ms"] for c in self.tl["census"]]
        self.assertTrue(all(b - a >= 150 for a, b in zip(times[1:-2], times[2:-1])), times)

    def test_text_table(self):
        out = rc.report(self.raw).stdout
        self.assertIn("Allocations over time (pid %d): 6500 allocations in 5 censuses\n"
                      % self.tl["pid"], out)
        rows = rate_rows(out)
        self.assertEqual([int(r[2]) for r in rows], COUNTS)
        # each rate is the count over the interval between censuses
        start = self.tl["start_ms"]
        ends = [c["t_ms"] - start for c in self.tl["census"]]
        for (frm, to, n, rate), a, b in zip(rows, [0] + ends, ends):
            self.assertEqual(rate, "-" if a == b else "%.0f" % (int(n) * 1000 / (b - a)))

    def test_html_data(self):
        page = self.scratch.path("r.html")
        rc.report(self.raw, "--format=html", "-o", page)
        rate = page_data(page)["tl"]["procs"][0]["rate"]
        self.assertEqual(rate["allocs"], COUNTS)
        self.assertEqual(rate["total"], sum(COUNTS))
        self.assertEqual(rate["from"][1:], rate["to"][:-1])
        self.assertEqual(rate["from"][0], 0)  # the process's start

    @unittest.skipUnless(rc.chromium(), "chromium is not installed")
    def test_html_panel_renders(self):
        page = self.scratch.path("r.html")
        rc.report(self.raw, "--format=html", "-o", page)
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        panel = re.search(r'<svg[^>]*id="tlrate0".*?</svg>', r.stdout, re.S).group(0)
        self.assertIn("allocations per second (6,500 in all)", panel)
        pts = re.search(r'<polyline points="([^"]*)"', panel).group(1).split()
        self.assertEqual(len(pts), 2 * len(COUNTS))  # a step per interval


class StartTime(harness.ProfTest):
    """Times from the process's start (docs/timeline-format.md, StartMs):
    progs/schedule.c sleeps 300 ms before its first allocation, so its
    first census is at 300 ms or later, and the run (300 + 3 x 150 ms of
    pauses) ends at 750 ms or later, but no later than the wall time the
    test measured around it plus a margin: the kernel's start may be early
    by a tick (10 ms), start and end are each floored to a millisecond,
    and the profile counts CLOCK_REALTIME, which time-keeping may step by
    a few milliseconds against the monotonic clock the test measures with.
    A start taken from the wrong clock or the wrong process would be off
    by far more."""

    def test_first_census_after_the_pause(self):
        s = self.scratch
        exe = s.path("schedule")
        harness.run(["clang-22", "-O1", "-g", SRC, "-o", exe])
        env = dict(os.environ, LD_PRELOAD=harness.find_built("libmemprof.so"),
                   MEMPROF_OPTIONS=f"log_path={s.path('s')}:timeline=1:timeline_interval_ms=100")
        t0 = time.monotonic()
        subprocess.run([exe, "300"], env=env, check=True)
        wall = (time.monotonic() - t0) * 1000
        (raw,) = [s.path(f) for f in os.listdir(s.dir)
                  if f.startswith("s.") and not f.endswith(".timeline")]
        tl = tf.read(raw + ".timeline")
        self.assertEqual(tl["start_from"], 1)  # the kernel's start, /proc/self/stat
        first = tl["census"][0]["t_ms"] - tl["start_ms"]
        end = tl["end_ms"] - tl["start_ms"]
        self.assertGreaterEqual(first, 300)
        self.assertGreaterEqual(end, 750)
        self.assertLessEqual(end, wall + 20)
        out = rc.report(raw).stdout
        m = re.search(r"peak live heap .* at ([\d.]+ m?s) of ([\d.]+ m?s)\n", out)
        self.assertEqual(m.group(2), fmt_ms(end))
        rows = rate_rows(out)
        self.assertEqual(rows[0][:3], ("0 ms", fmt_ms(first), "1"))
        page = s.path("r.html")
        rc.report(raw, "--format=html", "-o", page)
        p = page_data(page)["tl"]["procs"][0]
        self.assertEqual((p["t"][0], p["end"]), (first, end))


def fmt_ms(ms):
    """report_format.c's times: three significant digits, ms below 1 s."""
    if ms < 1000:
        return "%d ms" % ms if ms >= 100 else "%g ms" % float("%.3g" % ms)
    return "%g s" % float("%.3g" % (ms / 1000))


if __name__ == "__main__":
    harness.main()
