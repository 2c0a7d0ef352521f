/* bench/roots_census.c - the cost of a roots census (MEMPROF_OPTIONS=roots=1).
 *
 * Usage: roots_census MB [BLOCK_BYTES] [CENSUSES] [POINTERS] [NAMED]
 * Builds a heap of MB MiB in blocks of BLOCK_BYTES (default 1024) whose
 * first POINTERS words (default: all) point into other blocks (a random
 * graph; every block is also reachable from one global array), the rest
 * being small integers, then takes CENSUSES (default 5) censuses with
 * __memprof_heap_census() and prints the median CPU time of one, and that
 * time per 100 MiB of heap scanned.  With NAMED, that many blocks are also
 * named roots (__memprof_add_root): each reaches most of the graph, so
 * most blocks are shared by all of them (the bands' work; the reached
 * passes stop at their budget of 8 times the heap).  With every word a pointer, each word
 * is looked up: the worst case for the scan.  Link with libmemprof.a (or preload libmemprof.so); the runtime's
 * exit census runs after the timing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void __memprof_heap_census(void) __attribute__((weak));
void __memprof_add_root(const char *name, const void *ptr) __attribute__((weak));

static void **blocks;

static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: roots_census MB [BLOCK_BYTES] [CENSUSES]\n");
    return 2;
  }
  size_t mb = strtoul(argv[1], NULL, 10);
  size_t bsz = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
  int runs = argc > 3 ? atoi(argv[3]) : 5;
  size_t n = (mb << 20) / bsz, words = bsz / sizeof(void *);
  size_t ptrs = argc > 4 ? strtoul(argv[4], NULL, 10) : words;
  size_t named = argc > 5 ? strtoul(argv[5], NULL, 10) : 0;
  blocks = malloc(n * sizeof *blocks);
  for (size_t i = 0; i < n; i++)
    blocks[i] = malloc(bsz);
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < n; i++)
    for (size_t w = 0; w < words; w++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      ((void **)blocks[i])[w] = w < ptrs ? (char *)blocks[x % n] + (x >> 40) % bsz
                                         : (void *)(uintptr_t)(x & 0xffff);
    }
  for (size_t i = 0; i < named && i < n && __memprof_add_root; i++)
    __memprof_add_root("bench", blocks[i]);
  if (!__memprof_heap_census) {
    fprintf(stderr, "roots_census: no runtime with __memprof_heap_census\n");
    return 1;
  }
  double t[64];
  runs = runs > 64 ? 64 : runs < 1 ? 1 : runs;
  for (int r = 0; r < runs; r++) {
    double t0 = cpu_ms();
    __memprof_heap_census();
    t[r] = cpu_ms() - t0;
  }
  qsort(t, runs, sizeof *t, cmp);
  double med = t[runs / 2];
  printf("heap %zu MiB in %zu blocks of %zu bytes, %zu pointers each: census %.1f ms CPU "
         "(median of %d), %.1f ms per 100 MiB\n",
         mb, n, bsz, ptrs < words ? ptrs : words, med, runs, med * 100.0 / (double)mb);
  return 0;
}
