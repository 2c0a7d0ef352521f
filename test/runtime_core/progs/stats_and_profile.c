/* stats_and_profile.c - allocator statistics asked for twice (malloc_stats()
 * and, with atexit=1, at exit) in a program whose raw profile must still be
 * readable: 3 blocks of 4000 bytes from one site, 2 freed before the
 * statistics, one realloc'd to 8000, all freed at the end. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *site_stats(void) { return malloc(4000); }

int main(void) {
  char *p[3];
  for (int i = 0; i < 3; i++) {
    p[i] = site_stats();
    memset(p[i], i, 4000);
  }
  free(p[0]);
  free(p[1]);
  p[2] = realloc(p[2], 8000);
  malloc_stats();
  free(p[2]);
  return 0;
}
