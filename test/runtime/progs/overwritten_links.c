/* overwritten_links.c - test_rt_heap_layout.py: free-list links overwritten after free must not hand out foreign or duplicate blocks. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 256, SZ = 40 }; /* the 64-byte class, no lead: link = first word */
static char *a[N], *b[N];

static int cmp(const void *x, const void *y) {
  uintptr_t p = *(uintptr_t *)x, q = *(uintptr_t *)y;
  return p < q ? -1 : p > q;
}

int main(void) {
  for (int i = 0; i < N; i++)
    a[i] = malloc(SZ);
  for (int i = 0; i < N; i++)
    free(a[i]);
  uint32_t bad = 0xFFFFFFF0u;
  for (int i = 0; i < N; i++) /* the bug */
    memcpy(a[i], &bad, sizeof bad);
  int wrong = 0;
  for (int i = 0; i < N; i++) {
    b[i] = malloc(SZ);
    memset(b[i], 0x5a, SZ);
    wrong += malloc_usable_size(b[i]) != SZ;
  }
  qsort(b, N, sizeof b[0], cmp);
  int dup = 0;
  for (int i = 1; i < N; i++)
    dup += b[i] == b[i - 1];
  printf("wrong %d dup %d\n", wrong, dup);
  return 0;
}
