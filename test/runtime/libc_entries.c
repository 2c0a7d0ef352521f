/* libc_entries.c - glibc's own names of its allocator (__libc_malloc,
 * __libc_free, ...) mixed with the public ones, as programs and libraries
 * that call them do: each block is freed or reallocated through the other
 * family.  Prints one line per check; test_rt_libc_entries.py compares
 * them with a run on glibc's malloc and counts ROUNDS allocations at each
 * site_* function in the profile. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOI __attribute__((noinline))
#define ROUNDS 5

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

NOI void *site_malloc(size_t n) { return malloc(n); }
NOI void *site_libc_malloc(size_t n) { return __libc_malloc(n); }
NOI void *site_libc_calloc(size_t k, size_t n) { return __libc_calloc(k, n); }
NOI void *site_libc_realloc(void *p, size_t n) { return __libc_realloc(p, n); }
NOI void *site_libc_memalign(size_t a, size_t n) {
  return __libc_memalign(a, n);
}
NOI void *site_libc_valloc(size_t n) { return __libc_valloc(n); }
NOI void *site_libc_pvalloc(size_t n) { return __libc_pvalloc(n); }

static int all(const unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != v) return 0;
  return 1;
}

static int aligned(const void *p, size_t a) { return (uintptr_t)p % a == 0; }

int main(void) {
  for (int r = 0; r < ROUNDS; r++) {
    unsigned char *p = site_malloc(100);
    memset(p, 1, 100);
    __libc_free(p);

    p = site_libc_malloc(200);
    memset(p, 2, 200);
    p = realloc(p, 3000);
    printf("libc_malloc realloc %d\n", all(p, 200, 2));
    free(p);

    p = site_libc_calloc(10, 30);
    printf("libc_calloc zero %d\n", all(p, 300, 0));
    memset(p, 3, 300);
    p = site_libc_realloc(p, 500);
    printf("libc_realloc kept %d\n", all(p, 300, 3));
    free(p);

    p = site_libc_memalign(256, 40);
    printf("libc_memalign aligned %d\n", aligned(p, 256));
    memset(p, 4, 40);
    __libc_free(p);

    p = site_libc_valloc(10);
    printf("libc_valloc aligned %d\n", aligned(p, 4096));
    free(p);

    p = site_libc_pvalloc(10);
    printf("libc_pvalloc aligned %d %d\n", aligned(p, 4096),
           malloc_usable_size(p) >= 4096);
    memset(p, 5, 4096);
    __libc_free(p);
  }
  return 0;
}
