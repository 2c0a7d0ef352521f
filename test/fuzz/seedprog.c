/* seedprog.c - the small program whose profiles seed the raw fuzzer and
 * the damaged-profile corpus: a few allocation sites, one inlined, one
 * reached through two call paths, one with a histogram-sized block.
 * Built reproducibly (-ffile-prefix-map) so the checked-in profiles match
 * the binary a build recreates (same build id). */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *make(size_t n) {
  char *p = malloc(n);
  memset(p, 1, n);
  return p;
}

static inline __attribute__((always_inline)) void *inl(size_t n) {
  return calloc(n, 2);
}

__attribute__((noinline)) static void path_a(void) { free(make(24)); }
__attribute__((noinline)) static void path_b(void) { free(make(40)); }

int main(void) {
  for (int i = 0; i < 3; i++) path_a();
  path_b();
  void *q = inl(8);
  free(q);
  char *live = make(100);
  live[0] = 2;
  return live[1] - 1;
}
