/* preloaded.c - a program built without -fmemory-profile, for
 * test_report_preloaded.py: k blocks of 4 MiB and one of 2 MiB live
 * together (the peak), all freed, then 1 MiB kept to the end (a leak). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#define NOINLINE __attribute__((noinline))
NOINLINE void *alloc_a(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
NOINLINE void *alloc_b(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
NOINLINE void *alloc_leak(size_t n) { void *p = malloc(n); memset(p, 3, n); return p; }
int main(int argc, char **argv) {
  int k = argc > 1 ? atoi(argv[1]) : 1;
  void *a[4];
  for (int i = 0; i < k; i++) a[i] = alloc_a(4 << 20);
  void *b = alloc_b(2 << 20);
  for (int i = 0; i < k; i++) free(a[i]);
  free(b);
  void *leak = alloc_leak(1 << 20);
  printf("%d\n", leak != NULL);
  return 0;
}
