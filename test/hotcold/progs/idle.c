/* idle.c - what the cold arena does with its pages: the program fills 64
 * cold blocks of 128 KiB (8 MiB), frees every other one, then sleeps
 * argv[1] ms and reports, from /proc/self/smaps, the cold mapping's
 * resident and referenced KiB (the idle thread's rounds are in the exit
 * statistics):
 *   rss_kb=R referenced_kb=F cold=1
 * Freed pages leave when the decay or the idle thread purges them; live
 * ones lose their referenced bit when the idle thread advises MADV_COLD. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memprof_hotcold.h"

void *_Znwm12__hot_cold_t(size_t n, unsigned char hint);

enum { NBLOCKS = 64, BLOCK = 128 << 10 };

/* Rss and Referenced of the mapping that holds p. */
static void mapping_kb(const void *p, long *rss, long *ref) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[512];
  int in = 0;
  *rss = *ref = -1;
  while (fgets(line, sizeof line, f)) {
    uintptr_t lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
      continue;
    }
    if (in) {
      sscanf(line, "Rss: %ld kB", rss);
      sscanf(line, "Referenced: %ld kB", ref);
    }
  }
  fclose(f);
}

int main(int argc, char **argv) {
  int sleep_ms = argc > 1 ? atoi(argv[1]) : 0;
  static char *blocks[NBLOCKS];
  for (int i = 0; i < NBLOCKS; i++) {
    blocks[i] = _Znwm12__hot_cold_t(BLOCK, 1);
    memset(blocks[i], i + 1, BLOCK);
  }
  for (int i = 0; i < NBLOCKS; i += 2)
    free(blocks[i]);
  struct timespec ts = {sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  long rss, ref;
  mapping_kb(blocks[1], &rss, &ref);
  printf("rss_kb=%ld referenced_kb=%ld cold=%d\n", rss, ref, memprof_hotcold_is_cold(blocks[1]));
  return 0;
}
