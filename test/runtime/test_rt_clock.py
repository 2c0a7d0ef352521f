"""test_rt_clock.py - lifetimes in ms stay honest with the runtime's cheap
clocks (rt_clock.c): TSC extrapolation between real clock reads (default),
the ticker thread's published millisecond (background_thread=1) and the
real clock at every stamp (exact_clock=1).

The program brackets every block with CLOCK_REALTIME reads: t0 before
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
(test_ticker_sleeps_at_a_slow_rate): a program that frees and allocates a
block every 100 us (20 timestamps a ms) lets it wake at most 100 times in
400 ms (ticking, it wakes ~400 times), and one that then allocates as
fast as it can wakes it again (over 100 wake-ups in 300 ms).
"""
import os

import harness

# C shared by both programs: the real clock in ms, naps, the process's threads.
HELPERS = r"""
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
static void nap_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}
/* Threads of the process; *other: the tid of one that is not main. */
static int tasks(int *other) {
  int n = 0;
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') {
      n++;
      if (atoi(e->d_name) != getpid())
        *other = atoi(e->d_name);
    }
  closedir(d);
  return n;
}
/* How often thread tid went to sleep of its own accord. */
static long wakeups(int tid) {
  char path[64], line[128];
  long v = -1;
  snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "voluntary_ctxt_switches:", 24))
      v = atol(line + 24);
  if (f)
    fclose(f);
  return v;
}
"""

PROG = HELPERS + r"""
static void spin_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do
    clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}
/* One block of `size`, held while `hold` runs; prints its bounds. */
static void one(size_t size, void (*hold)(long), long arg, long long *lo,
                long long *hi) {
  long long t0 = now_ms();
  char *volatile p = malloc(size);
  long long t1 = now_ms();
  hold(arg);
  long long t2 = now_ms();
  free(p);
  long long t3 = now_ms();
  *lo = t2 - t1;
  *hi = t3 - t0;
}
int main(void) {
  long long lo, hi;
  one(1000, nap_ms, 120, &lo, &hi);
  printf("1000 %lld %lld\n", lo, hi);
  one(2000, spin_us, 37000, &lo, &hi); /* ~9 TSC re-anchor periods */
  printf("2000 %lld %lld\n", lo, hi);
  one(3000, nap_ms, 3, &lo, &hi);
  printf("3000 %lld %lld\n", lo, hi);
  /* 400 blocks of 48 bytes over ~200 ms of spinning: sums and extremes. */
  long long slo = 0, shi = 0, minhi = 1LL << 40, maxlo = 0;
  for (int i = 0; i < 400; i++) {
    one(48, spin_us, (i % 7) * 150, &lo, &hi);
    slo += lo;
    shi += hi;
    if (hi < minhi)
      minhi = hi;
    if (lo > maxlo)
      maxlo = lo;
  }
  printf("48 %lld %lld %lld %lld\n", slo, shi, minhi, maxlo);
  int ticker = 0, n = tasks(&ticker);
  long w0 = ticker ? wakeups(ticker) : 0;
  one(4000, nap_ms, 600, &lo, &hi); /* idle: no allocation for 600 ms */
  long w1 = ticker ? wakeups(ticker) : 0;
  printf("4000 %lld %lld\n", lo, hi);
  printf("tasks %d %ld\n", n, w1 - w0);
  return 0;
}
"""


RATE_PROG = HELPERS + r"""
static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
/* malloc/free pairs for `us` microseconds, one every `gap` us (0: flat out). */
static void pairs(double us, double gap) {
  double end = now_us() + us, next = 0;
  while (now_us() < end) {
    if (gap > 0) {
      while (now_us() < next)
        ;
      next = now_us() + gap;
    }
    char *volatile p = malloc(32);
    free(p);
  }
}
int main(void) {
  pairs(1000, 0); /* the ticker starts */
  int ticker = 0;
  tasks(&ticker);
  pairs(100000, 100); /* it sees the slow rate */
  long w0 = wakeups(ticker);
  pairs(400000, 100);
  long w1 = wakeups(ticker);
  pairs(300000, 0);
  long w2 = wakeups(ticker);
  printf("%d %ld %ld\n", ticker != 0, w1 - w0, w2 - w1);
  return 0;
}
"""


SLACK_MS = 10  # per stamp, ticker mode: how late the ticker may be (loaded CI)
TICKER = {"MEMPROF_OPTIONS": "background_thread=1"}


class ClockTest(harness.ProfTest):
    def run_clock(self, env):
        src = self.scratch.path("clock.c")
        with open(src, "w") as f:
            f.write(PROG)
        exe = harness.compile_program(self.scratch, src, opt="-O1")
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

    def test_ticker_within_real_clock_bounds(self):
        bounds, mibs = self.run_clock(TICKER)
        self.check_lifetimes(bounds, mibs, SLACK_MS)
        n, idle_wakeups = bounds["tasks"]
        self.assertEqual(n, 2)  # main + the ticker
        # Awake, it would wake ~600 times; it sleeps within one 64 ms window.
        self.assertLess(idle_wakeups, 300)

    def test_ticker_sleeps_at_a_slow_rate(self):
        src = self.scratch.write("rate.c", RATE_PROG)
        exe = harness.compile_program(self.scratch, src, out="rate", opt="-O1")
        r, _ = harness.run_program(self.scratch, exe, env=TICKER)
        found, slow, fast = map(int, r.stdout.decode().split())
        self.assertEqual(found, 1)
        self.assertLess(slow, 100, r.stdout.decode())
        self.assertGreater(fast, 100, r.stdout.decode())


FORK_PROG = HELPERS + r"""
#include <sys/wait.h>
int main(void) {
  char *volatile warm = malloc(16); /* the parent's ticker starts */
  free(warm);
  pid_t pid = fork();
  if (pid == 0) {
    /* The ticker is not copied into the child: it starts its own. */
    for (int i = 0; i < 200; i++) {
      long long t0 = now_ms();
      char *volatile p = malloc(5000);
      long long t1 = now_ms();
      nap_ms(i == 0 ? 80 : 0);
      long long t2 = now_ms();
      free(p);
      long long t3 = now_ms();
      if (i == 0)
        printf("child %lld %lld %d\n", t2 - t1, t3 - t0, tasks(&(int){0}));
    }
    exit(0); /* exit, not _exit: the child writes its profile at exit */
  }
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
"""


class ForkedClockTest(harness.ProfTest):
    def test_child_starts_its_own_ticker(self):
        src = self.scratch.path("fork_clock.c")
        with open(src, "w") as f:
            f.write(FORK_PROG)
        exe = harness.compile_program(self.scratch, src, opt="-O1")
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
