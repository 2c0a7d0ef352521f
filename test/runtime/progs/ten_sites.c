/* ten_sites.c - ten allocations of distinct sizes from one site, each
 * written and freed: a profile with known contents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  for (int i = 0; i < 10; i++) {
    char *volatile p = malloc(100 + i); /* kept: clang may elide a malloc it sees freed */
    memset(p, 1, 100);
    free(p);
  }
  printf("ok\n");
  return 0;
}
