/* sample_sites.c - allocation sites of known counts and sizes for the
 * sampling tests (test_rt_sample.py; test_report_sampled.py reports on
 * its profiles).  Each site is its own function and
 * allocates blocks of one size that no other site uses, so a profile's
 * sites are told apart by TotalSize / AllocCount.  Every block is written
 * once per 8 bytes (one instrumented store each): a site's
 * TotalAccessCount is count * size / 8.  The "kept" site's blocks are
 * still live at exit (recorded by the exit dump); the others are freed. */
#include <stdlib.h>

#define KEEP_N 20000
static void *kept[KEEP_N];

static __attribute__((noinline)) void touch(long *p, size_t size) {
  for (size_t i = 0; i < size / 8; i++)
    p[i] = (long)i;
}

static __attribute__((noinline)) void site(size_t size, long n) {
  for (long i = 0; i < n; i++) {
    long *p = malloc(size);
    touch(p, size);
    free(p);
  }
}

static __attribute__((noinline)) void small_site(void) { site(32, 200000); }
static __attribute__((noinline)) void medium_site(void) { site(4096, 4000); }
static __attribute__((noinline)) void interval_site(void) { site(65536, 400); }
static __attribute__((noinline)) void large_site(void) { site(1 << 20, 24); }

static __attribute__((noinline)) void kept_site(void) {
  for (long i = 0; i < KEEP_N; i++) {
    kept[i] = malloc(48);
    touch(kept[i], 48);
  }
}

int main(void) {
  small_site();
  medium_site();
  interval_site();
  large_site();
  kept_site();
  return 0;
}
