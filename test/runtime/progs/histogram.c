/* histogram.c - test_rt_modes.py: exact per-granule access histograms, saturation at 255, ranges from memset. */
#include <stdlib.h>
#include <string.h>
static void *(*volatile p_memset)(void *, int, size_t) = memset;
__attribute__((noinline)) static void st(volatile int *p, int i, int k) {
  for (int r = 0; r < k; r++)
    p[i] = r;
}
int main(void) {
  int *p = malloc(40); // @hist40
  st(p, 0, 300);
  st(p, 2, 7);
  st(p, 6, 1);
  st(p, 8, 2);
  st(p, 9, 4);
  free(p);
  char *q = malloc(104); // @hist104
  for (int i = 0; i < 104; i++)
    q[i] = (char)i;
  st((int *)q, 25, 250);
  free(q);
  int *live = malloc(24); // @hist_live
  st(live, 1, 9);
  st(live, 5, 3);
  char *m = malloc(104); // @hist_memset_libc
  p_memset(m, 1, 104);
  free(m);
  char *n = malloc(104); // @hist_memset_intrinsic
  memset(n, 1, 104);
  free(n);
  return 0;
}
