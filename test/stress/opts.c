/* opts.c - a program for test_options_hostile.py: 7 blocks of 24 bytes at
 * one site, whatever MEMPROF_OPTIONS says. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void *site_opt(size_t n) { return malloc(n); }

int main(void) {
  for (int i = 0; i < 7; i++) {
    char *p = site_opt(24);
    memset(p, 0, 24);
    free(p);
  }
  return 0;
}
