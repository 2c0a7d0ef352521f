/* reuse_order.c - blocks freed in a shuffled order, then allocated again
 * (test_rt_heap_layout.py, test_freed_slots_come_back_in_address_order).
 *
 * Prints how many of the N new blocks sit below the one allocated just
 * before them (descents), how many are blocks freed before (reused) and
 * how many are handed out twice (dup).  Handed out in the order they were
 * freed, about half of them descend; in address order, only the first
 * ones (still in the thread's cache) and the first of each refill can. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1024, SZ = 40 }; /* the 64-byte class */
static char *a[N], *b[N];
static unsigned order[N];

static int cmp(const void *x, const void *y) {
  uintptr_t p = *(const uintptr_t *)x, q = *(const uintptr_t *)y;
  return p < q ? -1 : p > q;
}

int main(void) {
  for (int i = 0; i < N; i++) {
    a[i] = malloc(SZ);
    order[i] = (unsigned)i;
  }
  unsigned seed = 12345;
  for (int i = N - 1; i > 0; i--) { /* Fisher-Yates with a fixed LCG */
    seed = seed * 1103515245u + 12345u;
    unsigned j = (seed >> 8) % (unsigned)(i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (int i = 0; i < N; i++)
    free(a[order[i]]);
  int descents = 0;
  for (int i = 0; i < N; i++) {
    b[i] = malloc(SZ);
    descents += i > 0 && b[i] < b[i - 1];
  }
  qsort(a, N, sizeof a[0], cmp);
  qsort(b, N, sizeof b[0], cmp);
  int reused = 0, dup = 0;
  for (int i = 0; i < N; i++) {
    reused += bsearch(&b[i], a, N, sizeof a[0], cmp) != NULL;
    dup += i > 0 && b[i] == b[i - 1];
  }
  printf("descents %d reused %d dup %d\n", descents, reused, dup);
  for (int i = 0; i < N; i++)
    free(b[i]);
  return 0;
}
