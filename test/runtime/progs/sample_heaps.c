/* sample_heaps.c - the allocation API over a mix of recorded blocks (the
 * profiler's heap) and unrecorded ones (the C library's heap under
 * sample_interval with unsampled_to_libc=1), for test_rt_sample.py.
 *   sample_heaps own  prints how many of 10000 blocks of 32 bytes the
 *                     profiler's heap owns (__sanitizer_get_ownership)
 *   sample_heaps api  every malloc-family call, with realloc carrying
 *                     blocks between the heaps both ways: contents,
 *                     zeroing, alignment and usable sizes are checked;
 *                     prints "ok" or the first failure (exit 1)
 *   sample_heaps tune glibc's tuning calls with N blocks of 4000 bytes
 *                     live: "mallopt R1 inuse I trim R2" (mallopt's
 *                     return, 1 if mallinfo2 counts at least their bytes,
 *                     malloc_trim's return once they are freed) */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* weak: the program also runs without the runtime (preloaded, or not at all) */
int __sanitizer_get_ownership(const volatile void *p) __attribute__((weak));

#define N 4000
#define ROUNDS 12

static unsigned long long rng = 1;
static unsigned next(void) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)(rng >> 33);
}

static unsigned char *blk[N];
static size_t len[N];
static unsigned seed[N];

static void fill(int i) {
  seed[i] = next();
  for (size_t j = 0; j < len[i]; j++)
    blk[i][j] = (unsigned char)(seed[i] + j * 7);
}

/* Index of the first byte of block i that is not what fill wrote, or -1. */
static long damaged(int i, size_t n) {
  for (size_t j = 0; j < n; j++)
    if (blk[i][j] != (unsigned char)(seed[i] + j * 7))
      return (long)j;
  return -1;
}

#define FAIL(...)                                                            \
  do {                                                                       \
    printf(__VA_ARGS__);                                                     \
    putchar('\n');                                                           \
    return 1;                                                                \
  } while (0)

/* A fresh block for slot i from one of the allocation calls. */
static int allocate(int i) {
  size_t n = next() % 5000, a = 16;
  void *p = NULL;
  switch (next() % 5) {
  case 0:
    p = malloc(n);
    break;
  case 1:
    p = calloc(1, n);
    for (size_t j = 0; p && j < n; j++)
      if (((unsigned char *)p)[j])
        FAIL("calloc(1, %zu): byte %zu is not zero", n, j);
    break;
  case 2:
    a = (size_t)16 << (next() % 9); /* up to a page */
    p = memalign(a, n);
    break;
  case 3:
    a = (size_t)8 << (next() % 10);
    if (posix_memalign(&p, a, n))
      FAIL("posix_memalign(%zu, %zu) failed", a, n);
    break;
  default:
    a = 64;
    n = (n + 63) & ~(size_t)63;
    p = aligned_alloc(a, n);
  }
  if (!p)
    FAIL("allocation of %zu bytes failed", n);
  if ((uintptr_t)p % a)
    FAIL("%p is not aligned to %zu", p, a);
  if (malloc_usable_size(p) < n)
    FAIL("usable size %zu of a block of %zu", malloc_usable_size(p), n);
  blk[i] = p;
  len[i] = n;
  fill(i);
  return 0;
}

/* realloc of slot i's block to a new size, up to 200000 bytes (beyond the
 * size classes and glibc's mmap threshold) one time in four. */
static int reallocate(int i) {
  size_t n = 1 + next() % (next() % 4 ? 3000 : 200000);
  unsigned char *q = realloc(blk[i], n);
  if (!q)
    FAIL("realloc to %zu failed", n);
  size_t keep = len[i] < n ? len[i] : n;
  blk[i] = q;
  long bad = damaged(i, keep);
  if (bad >= 0)
    FAIL("realloc %zu -> %zu: byte %ld changed", len[i], n, bad);
  len[i] = n;
  fill(i);
  return 0;
}

static int api(void) {
  for (int round = 0; round < ROUNDS; round++) {
    for (int i = 0; i < N; i++) {
      if (blk[i] && next() % 2) {
        if (reallocate(i))
          return 1;
        continue;
      }
      free(blk[i]);
      if (allocate(i))
        return 1;
    }
    for (int i = 0; i < N; i++)
      if (damaged(i, len[i]) >= 0)
        FAIL("round %d: block %d (%zu bytes) was overwritten", round, i, len[i]);
  }
  for (int i = 0; i < N; i++)
    free(blk[i]);
  void *volatile p = malloc(100);
  void *volatile q = realloc(p, 0); /* frees p (LLVM's runtime's choice) */
  if (q)
    FAIL("realloc(p, 0) returned a block");
  free(NULL);
  puts("ok");
  return 0;
}

static int own(void) {
  if (!__sanitizer_get_ownership)
    FAIL("no runtime");
  int owned = 0;
  for (int i = 0; i < 10000 && i < N; i++) {
    blk[i] = malloc(32);
    owned += __sanitizer_get_ownership(blk[i]);
  }
  for (int i = 0; i < N; i++)
    free(blk[i]);
  for (int i = N; i < 10000; i++) {
    void *p = malloc(32);
    owned += __sanitizer_get_ownership(p);
    free(p);
  }
  printf("%d\n", owned);
  return 0;
}

static int tune(void) {
  int opt = mallopt(M_MMAP_THRESHOLD, 1 << 20);
  for (int i = 0; i < N; i++)
    blk[i] = malloc(4000);
  struct mallinfo2 mi = mallinfo2();
  int inuse = mi.uordblks >= (size_t)N * 4000;
  for (int i = 0; i < N; i++)
    free(blk[i]);
  printf("mallopt %d inuse %d trim %d\n", opt, inuse, malloc_trim(0));
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "own"))
    return own();
  if (argc > 1 && !strcmp(argv[1], "tune"))
    return tune();
  return api();
}
