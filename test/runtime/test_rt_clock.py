"""test_rt_clock.py - lifetimes in ms stay honest with the runtime's cheap
clock (rt_clock.c: TSC extrapolation between real clock reads).

The program brackets every block with CLOCK_REALTIME reads: t0 before
malloc, t1 after it returns, t2 before free, t3 after it returns (all floored
to ms).  The runtime stamps the block somewhere in [t0, t1] and [t2, t3],
so its lifetime must lie in [t2 - t1, t3 - t0]: per block for single-block
sizes, summed for TotalLifetime and bounding Min/MaxLifetime otherwise.
Blocks are kept across sleeps (real clock reads), busy spins (long stretches
of TSC extrapolation) and tight loops (many stamps within one ms).
"""
import os

import harness

PROG = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
static void spin_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do
    clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}
static void nap_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
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
  return 0;
}
"""


class ClockTest(harness.ProfTest):
    def test_lifetimes_within_real_clock_bounds(self):
        src = self.scratch.path("clock.c")
        with open(src, "w") as f:
            f.write(PROG)
        exe = harness.compile_program(self.scratch, src, opt="-O1")
        r, raws = harness.run_program(self.scratch, exe)
        self.assertEqual(len(raws), 1, raws)
        bounds = {}
        for line in r.stdout.decode().split("\n"):
            if line:
                size, *vals = (int(x) for x in line.split())
                bounds[size] = vals
        profs = harness.read_raw(raws[0])
        os.unlink(raws[0])
        mibs = harness.mibs_by_size(profs[0])
        for size in (1000, 2000, 3000):
            lo, hi = bounds[size]
            m = mibs[size]
            with self.subTest(size=size):
                self.assertEqual(m["AllocCount"], 1)
                self.assertTrue(lo <= m["TotalLifetime"] <= hi,
                                f"lifetime {m['TotalLifetime']} outside [{lo}, {hi}]")
                self.assertEqual(m["MinLifetime"], m["TotalLifetime"])
                self.assertLessEqual(m["AllocTimestamp"], m["DeallocTimestamp"])
        slo, shi, minhi, maxlo = bounds[48]
        m = mibs[48]
        self.assertEqual(m["AllocCount"], 400)
        self.assertTrue(slo <= m["TotalLifetime"] <= shi,
                        f"total {m['TotalLifetime']} outside [{slo}, {shi}]")
        self.assertLessEqual(m["MinLifetime"], minhi)
        self.assertGreaterEqual(m["MaxLifetime"], maxlo)
        self.assertLessEqual(m["MaxLifetime"], 1000)  # no wrapped (negative) lifetime


if __name__ == "__main__":
    harness.main()
