/* stress_lib.c - an instrumented shared library that stress.c dlopens:
 * lib_alloc(n) allocates and frees n 40-byte blocks at one site. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void *lib_site(size_t n) { return malloc(n); }

void lib_alloc(int n) {
  for (int i = 0; i < n; i++) {
    char *p = lib_site(40);
    memset(p, 1, 40);
    free(p);
  }
}
