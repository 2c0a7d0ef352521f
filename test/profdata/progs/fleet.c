/* fleet.c - one member of a fleet: the same program run with a different
 * seed in each process, so the processes share most allocation contexts
 * but allocate different amounts through them, some contexts only in some
 * processes, and keep some blocks live at exit.  `fleet SEED`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

static char *kept[4096];
static int n_kept;

/* A context per (depth, branch) pair: the bits of w choose a path. */
__attribute__((noinline)) static char *leaf(size_t n) { return malloc(n); }
__attribute__((noinline)) static char *a(int d, unsigned w);
__attribute__((noinline)) static char *b(int d, unsigned w);
__attribute__((noinline)) static char *step(int d, unsigned w) {
  return d == 0 ? leaf(16 + (w & 15) * 24) : ((w >> d) & 1) ? a(d - 1, w) : b(d - 1, w);
}
__attribute__((noinline)) static char *a(int d, unsigned w) { return step(d, w); }
__attribute__((noinline)) static char *b(int d, unsigned w) { return step(d, w); }

int main(int argc, char **argv) {
  rng = argc > 1 ? (uint32_t)atoi(argv[1]) : 1;
  int n = 2000 + (int)(next() % 2000);
  for (int i = 0; i < n; i++) {
    unsigned w = next() % 64; /* 64 contexts; which ones a seed meets varies */
    char *p = step(6, w);
    memset(p, (int)w, 16 + (w & 15) * 24);
    if (next() % 7 == 0 && n_kept < 4096)
      kept[n_kept++] = p;
    else
      free(p);
  }
  return 0;
}
