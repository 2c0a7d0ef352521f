/* realloc_growth.c - test_rt_malloc.py: a realloc chain in one site, secondary-sized calloc/realloc, a live aligned 1 MiB block. */
#include <malloc.h>
#include <stdlib.h>

int main(void) {
  int *p = 0;
  for (int i = 0; i < 100; i++) {
    p = realloc(p, 8 * (i + 1)); // @grow
    p[2 * i] = i;
  }
  long sum = 0;
  for (int i = 0; i < 100; i++)
    sum += p[2 * i];
  free(p);
  int *z = calloc(1 << 18, 4); // @big_calloc
  z[0] = 1;
  z[(1 << 18) - 1] = 2;
  int *y = realloc(z, 3 << 20); // @big_realloc
  sum += y[(1 << 18) - 1] + y[1] + y[0];
  y[(3 << 18) - 1] = 3;
  free(y);
  int *al = memalign(4096, 1 << 20); // @big_memalign_live
  al[5] = 1;
  return sum == 4950 + 2 + 0 + 1 ? 0 : 1;
}
