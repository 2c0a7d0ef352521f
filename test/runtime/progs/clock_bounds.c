/* clock_bounds.c - test_rt_clock.py: real-clock bounds of blocks held across naps, spins and tight loops; the ticker's idle wake-ups. */
#include "clock_helpers.h"
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
