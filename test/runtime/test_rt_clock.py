"""test_rt_clock.py - lifetimes in ms stay honest with the runtime's cheap
clocks (rt_clock.c): TSC extrapolation between real clock reads (default),
the ticker thread's published millisecond (background_thread=1) and the
real clock at every stamp (exact_clock=1); the TSC is extrapolated under
another clocksource (kvm-clock) too when the CPU's TSC is invariant
(invariant_tsc=1, the default), checked against invariant_tsc=0.

The program (progs/clock_bounds.c) brackets every block with CLOCK_REALTIME reads: t0 before
malloc, t1 after it returns, t2 before free, t3 after it returns (all floored
to ms).  The runtime stamps the block somewhere in [t0, t1] and [t2, t3],
so its lifetime must lie in [t2 - t1, t3 - t0]: per block for single-block
sizes, summed for TotalLifetime and bounding Min/MaxLifetime otherwise.
Blocks are kept across sleeps (real clock reads), busy spins (long stretches
of TSC extrapolation) and tight loops (many stamps within one ms).  With the
ticker a stamp may read the previous ms for as long as the ticker is late
after a boundary, so its bounds get that much slack (SLACK_MS per stamp).
The program also reports its threads (the ticker is the only extra one) and
how often the ticker woke during 600 ms without allocations (it sleeps once
a 64 ms window saw fewer than 256 timestamps a ms, instead of waking every
ms).

The ticker also sleeps while timestamps come slower than 256 a ms
(test_ticker_sleeps_at_a_slow_rate, progs/ticker_rate.c): a program that frees and allocates a
block every 100 us (20 timestamps a ms) lets it wake at most 100 times in
400 ms (ticking, it wakes ~400 times), and one that then allocates as
fast as it can wakes it again (over 100 wake-ups in 300 ms).
"""
import os

import harness


SLACK_MS = 10  # per stamp, ticker mode: how late the ticker may be (loaded CI)
TICKER = {"MEMPROF_OPTIONS": "background_thread=1"}


class ClockTest(harness.ProfTest):
    def run_clock(self, env):
        exe = harness.compile_program(
            self.scratch, harness.prog_path(__file__, "clock_bounds.c"), opt="-O1")
        r, raws = harness.run_program(self.scratch, exe, env=env)
        self.assertEqual(len(raws), 1, raws)
        bounds = {}
        for line in r.stdout.decode().split("\n"):
            if line:
                key, *vals = line.split()
                bounds[key] = [int(x) for x in vals]
        profs = harness.read_raw(raws[0])
        os.unlink(raws[0])
        return bounds, harness.mibs_by_size(profs[0])

    def check_lifetimes(self, bounds, mibs, slack):
        for size in (1000, 2000, 3000, 4000):
            lo, hi = bounds[str(size)]
            lo, hi = lo - slack, hi + slack
            m = mibs[size]
            with self.subTest(size=size):
                self.assertEqual(m["AllocCount"], 1)
                self.assertTrue(lo <= m["TotalLifetime"] <= hi,
                                f"lifetime {m['TotalLifetime']} outside [{lo}, {hi}]")
                self.assertEqual(m["MinLifetime"], m["TotalLifetime"])
                self.assertLessEqual(m["AllocTimestamp"], m["DeallocTimestamp"])
        slo, shi, minhi, maxlo = bounds["48"]
        m = mibs[48]
        self.assertEqual(m["AllocCount"], 400)
        # Summed over 400 blocks the ticker's lateness averages out: one ms
        # per block on average is already far more than it shows.
        sum_slack = 400 if slack else 0
        self.assertTrue(slo - sum_slack <= m["TotalLifetime"] <= shi + sum_slack,
                        f"total {m['TotalLifetime']} outside [{slo}, {shi}]")
        self.assertLessEqual(m["MinLifetime"], minhi + slack)
        self.assertGreaterEqual(m["MaxLifetime"], maxlo - slack)
        self.assertLessEqual(m["MaxLifetime"], 1000)  # no wrapped (negative) lifetime

    def test_exact_clock_within_real_clock_bounds(self):
        bounds, mibs = self.run_clock({"MEMPROF_OPTIONS": "exact_clock=1"})
        self.check_lifetimes(bounds, mibs, 0)
        self.assertEqual(bounds["tasks"], [1, 0])  # no ticker thread

    def test_default_clock_within_real_clock_bounds(self):
        # No thread: each timestamp extrapolates the clock from the TSC,
        # which may put a stamp across a ms boundary.
        bounds, mibs = self.run_clock({})
        self.check_lifetimes(bounds, mibs, 1)
        self.assertEqual(bounds["tasks"], [1, 0])

    def test_invariant_tsc_both_settings_within_real_clock_bounds(self):
        # invariant_tsc=1 extrapolates from the TSC under kvm-clock too;
        # 0 reads the clock at every stamp there.  Either way the same
        # blocks, counts and real-clock bounds.
        for v in (0, 1):
            with self.subTest(invariant_tsc=v):
                bounds, mibs = self.run_clock({"MEMPROF_OPTIONS": f"invariant_tsc={v}"})
                self.check_lifetimes(bounds, mibs, 1)
                self.assertEqual(bounds["tasks"], [1, 0])
                self.assertEqual({s: mibs[s]["AllocCount"] for s in (48, 1000, 4000)},
                                 {48: 400, 1000: 1, 4000: 1})

    def test_ticker_within_real_clock_bounds(self):
        bounds, mibs = self.run_clock(TICKER)
        self.check_lifetimes(bounds, mibs, SLACK_MS)
        n, idle_wakeups = bounds["tasks"]
        self.assertEqual(n, 2)  # main + the ticker
        # Awake, it would wake ~600 times; it sleeps within one 64 ms window.
        self.assertLess(idle_wakeups, 300)

    def test_ticker_sleeps_at_a_slow_rate(self):
        exe = harness.compile_program(self.scratch,
                                      harness.prog_path(__file__, "ticker_rate.c"),
                                      out="rate", opt="-O1")
        r, _ = harness.run_program(self.scratch, exe, env=TICKER)
        found, slow, fast = map(int, r.stdout.decode().split())
        self.assertEqual(found, 1)
        self.assertLess(slow, 100, r.stdout.decode())
        self.assertGreater(fast, 100, r.stdout.decode())


class ForkedClockTest(harness.ProfTest):
    def test_child_starts_its_own_ticker(self):
        exe = harness.compile_program(
            self.scratch, harness.prog_path(__file__, "fork_ticker.c"), opt="-O1")
        r, raws = harness.run_program(self.scratch, exe, env=TICKER)
        self.assertEqual(len(raws), 2, raws)  # parent and child
        lo, hi, ntasks = (int(x) for x in r.stdout.decode().split()[1:])
        self.assertEqual(ntasks, 2)  # the child's main thread + its ticker
        child = [p for p in (harness.read_raw(x)[0] for x in raws)
                 if 5000 in harness.mibs_by_size(p)]
        self.assertEqual(len(child), 1)
        m = harness.mibs_by_size(child[0])[5000]
        self.assertEqual(m["AllocCount"], 200)
        self.assertGreaterEqual(m["MaxLifetime"], lo - SLACK_MS)
        self.assertLessEqual(m["MaxLifetime"], hi + SLACK_MS)
        self.assertLessEqual(m["TotalLifetime"], hi + 200 * 1)  # no wrapped lifetime


if __name__ == "__main__":
    harness.main()
