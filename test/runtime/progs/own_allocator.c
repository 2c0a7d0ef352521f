/* own_allocator.c - test_rt_safety.py: a program with an allocator of its
 * own (malloc, free, calloc, realloc over a static pool, as Chromium's
 * PartitionAlloc or a statically linked jemalloc defines them) that gets
 * blocks from functions it does not define (strdup, strndup,
 * reallocarray), which libc or a preloaded runtime serve.  Every block
 * must come from its pool, as it does without a preloaded runtime;
 * prints how many did not and exits with that count. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char pool[1 << 20];
static size_t used;
static int foreign;

static int in_pool(const void *p) {
  return (const char *)p >= pool && (const char *)p < pool + sizeof pool;
}

void *malloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (used + n + 16 > sizeof pool)
    return NULL;
  size_t *p = (size_t *)(pool + used);
  used += n + 16;
  *p = n;
  return p + 2;
}

void free(void *p) {
  if (p && !in_pool(p))
    foreign++;
}

void *calloc(size_t a, size_t b) {
  void *p = malloc(a * b);
  if (p)
    memset(p, 0, a * b);
  return p;
}

void *realloc(void *old, size_t n) {
  void *p = malloc(n);
  if (p && old && in_pool(old)) {
    size_t had = ((size_t *)old)[-2];
    memcpy(p, old, had < n ? had : n);
  }
  free(old);
  return p;
}

int main(void) {
  char *a = strdup("hello");
  char *b = strndup("world!", 3);
  int *c = reallocarray(NULL, 4, sizeof(int));
  c = reallocarray(c, 8, sizeof(int));
  foreign += !in_pool(a) + !in_pool(b) + !in_pool(c);
  printf("%s %s\n", a, b);
  free(a);
  free(b);
  free(c);
  printf("foreign %d\n", foreign);
  return foreign;
}
