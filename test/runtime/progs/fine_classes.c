/* fine_classes.c - how far apart the allocator puts small blocks, for
 * test_rt_fine_classes.py (fine_classes, runtime/heap/rt_size_class.h).
 *
 * Usage: fine_classes [DSO]
 * For each of the sizes 8, 24, 40, 100 and 200 bytes, allocates 64 blocks
 * in a row (never-used slots come in ascending address order) and prints
 * "size:distance", the most common distance between consecutive blocks:
 * the size of the class that served them.  Then prints "fill:apart" when
 * a block of 24 bytes and one of 32 bytes lie in different 4 GiB regions
 * (classes: the 32-byte one in the twin of the 24-byte one's class, as a
 * block filling its slot), else "fill:shared".  Then checks that blocks of 24
 * bytes aligned to 32 and 64 (aligned_alloc, posix_memalign) keep their
 * alignment and prints "aligned ok".  Then allocates 32 pairs of a
 * 0-byte block aligned to 32 and a 24-byte block (both of the 32-byte
 * class when it serves), and prints "distinct ok" when no two of those
 * blocks start at the same address and freeing the 0-byte ones left
 * every 24-byte one's bytes alone.  With DSO, dlopens it (a module
 * built with -fmemory-profile: its constructor calls __memprof_init) and
 * prints the line for 24 bytes again.  Blocks are kept: nothing freed
 * comes back. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64

static void distance(size_t size) {
  uintptr_t p[N];
  for (int i = 0; i < N; i++)
    p[i] = (uintptr_t)malloc(size);
  long best = 0;
  int best_n = 0;
  for (int i = 1; i < N; i++) {
    long d = (long)(p[i] - p[i - 1]);
    int n = 0;
    for (int j = 1; j < N; j++)
      n += (long)(p[j] - p[j - 1]) == d;
    if (n > best_n) {
      best = d;
      best_n = n;
    }
  }
  printf("%zu:%ld\n", size, best);
}

int main(int argc, char **argv) {
  size_t sizes[] = {8, 24, 40, 100, 200};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    distance(sizes[i]);
  uintptr_t partial = (uintptr_t)malloc(24), full = (uintptr_t)malloc(32);
  puts(partial >> 32 != full >> 32 ? "fill:apart" : "fill:shared");
  int ok = 1;
  for (int i = 0; i < 100; i++) {
    void *a = aligned_alloc(32, 32), *b = aligned_alloc(64, 64), *c = NULL;
    ok &= posix_memalign(&c, 64, 24) == 0;
    ok &= (uintptr_t)a % 32 == 0 && (uintptr_t)b % 64 == 0 && (uintptr_t)c % 64 == 0;
  }
  puts(ok ? "aligned ok" : "aligned broken");
  char *pair[64];
  for (int i = 0; i < 64; i += 2) {
    pair[i] = NULL;
    ok &= posix_memalign((void **)&pair[i], 32, 0) == 0;
    pair[i + 1] = malloc(24);
    memset(pair[i + 1], 'x', 24);
  }
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < i; j++)
      ok &= pair[i] != pair[j];
  for (int i = 0; i < 64; i += 2)
    free(pair[i]);
  for (int i = 0; i < 64; i += 2) { /* freed slots come back first */
    char *again = malloc(24);
    memset(again, 'y', 24);
  }
  for (int i = 1; i < 64; i += 2)
    ok &= memcmp(pair[i], "xxxxxxxxxxxxxxxxxxxxxxxx", 24) == 0;
  puts(ok ? "distinct ok" : "distinct broken");
  if (argc > 1) {
    if (!dlopen(argv[1], RTLD_NOW)) {
      fprintf(stderr, "%s\n", dlerror());
      return 1;
    }
    distance(24);
  }
  return 0;
}
