/* malloc_family.c - test_rt_malloc.py and test_rt_modes.py: every malloc-family entry point at its own marked site, exact counts. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* glibc 2.36 does not declare them yet (C23). */
void free_sized(void *p, size_t n);
void free_aligned_sized(void *p, size_t a, size_t n);

__attribute__((noinline)) static void st(volatile int *p, int n, int k) {
  for (int r = 0; r < k; r++)
    for (int i = 0; i < n; i++)
      p[i] = i;
}
__attribute__((noinline)) static int ld(volatile int *p, int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += p[i];
  return s;
}
__attribute__((noinline)) static void fill(volatile char *p, const char *s) {
  do
    *p++ = *s;
  while (*s++);
}

int main(void) {
  int *a = malloc(40); // @malloc
  st(a, 10, 3);
  ld(a, 10);
  free(a);
  int *b = calloc(10, 4); // @calloc
  ld(b, 10);
  ld(b, 10);
  free(b);
  int *c = malloc(24); // @chain0
  st(c, 6, 1);
  c = realloc(c, 72); // @chain1
  st(c, 18, 1);
  c = realloc(c, 8); // @chain2
  ld(c, 2);
  free(c);
  int *r0 = realloc(NULL, 40); // @realloc_null
  st(r0, 10, 2);
  free(r0);
  int *ra = reallocarray(NULL, 5, 8); // @reallocarray
  st(ra, 10, 1);
  free(ra);
  int *e = memalign(64, 40); // @memalign
  st(e, 10, 2);
  free(e);
  int *f = aligned_alloc(8, 200); // @aligned_alloc
  st(f, 50, 1);
  free(f);
  void *g;
  if (posix_memalign(&g, 256, 104)) // @posix_memalign
    return 2;
  st(g, 26, 1);
  free(g);
  int *h = valloc(104); // @valloc
  st(h, 26, 1);
  free(h);
  int *i = pvalloc(10); // @pvalloc
  st(i, 1, 1);
  free(i);
  char *src = malloc(24); // @dup_src
  fill(src, "0123456789abcdefghijklm");
  char *d = strdup(src); // @strdup
  if (strlen(d) != 23)
    return 3;
  char *n = strndup(src, 10); // @strndup
  ld((int *)n, 1);
  free(n);
  free(d);
  free(src);
  int *fs = malloc(48); // @free_sized
  st(fs, 12, 1);
  free_sized(fs, 48);
  int *fa = aligned_alloc(64, 128); // @free_aligned_sized
  st(fa, 18, 1);
  free_aligned_sized(fa, 64, 128);
  int *big = malloc(1 << 20); // @big_live
  st(big, 2, 3);
  int *small = malloc(40); // @small_live
  st(small, 10, 1);
  return 0;
}
