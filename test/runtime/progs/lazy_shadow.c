/* lazy_shadow.c - test_rt_lazy_shadow.py: a program built without
 * -fmemory-profile, run with libmemprof.so preloaded.  It fills blocks of
 * three sizes with memset (which the runtime's interceptor counts, one
 * per 8 bytes, while the shadow is kept), copies and compares two of them
 * (4000 bytes, past the interceptors' inline path, and 32 bytes), and prints the resident KiB of
 * the runtime's shadow mapping (the one of 2^44 bytes) from
 * /proc/self/smaps, with the blocks still live. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_N 1000
#define SHADOW_KB (1ULL << 34) /* 2^44 bytes */

static unsigned long long shadow_rss_kb(void) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[512];
  int in_shadow = 0;
  unsigned long long kb, rss = ~0ULL;
  while (f && fgets(line, sizeof line, f)) {
    if (sscanf(line, "Size: %llu kB", &kb) == 1)
      in_shadow = kb == SHADOW_KB;
    else if (in_shadow && sscanf(line, "Rss: %llu kB", &kb) == 1)
      rss = kb;
  }
  if (f)
    fclose(f);
  return rss;
}

int main(void) {
  static char *small[SMALL_N];
  for (int i = 0; i < SMALL_N; i++) {
    small[i] = malloc(4000);
    memset(small[i], i, 4000);
  }
  volatile int same = 0;
  for (size_t n = 4000; n; n = n == 4000 ? 32 : 0) {
    memcpy(small[1], small[0], n);
    same += !memcmp(small[0], small[1], n);
  }
  char *mid = malloc(200000);
  memset(mid, 1, 200000);
  char *big = malloc(8 << 20);
  memset(big, 2, 8 << 20);
  printf("shadow_rss_kb %llu same %d\n", shadow_rss_kb(), same);
  free(big);
  free(mid);
  for (int i = 0; i < SMALL_N; i++)
    free(small[i]);
  return 0;
}
