/* takes_mallocs_address.c - a program that keeps malloc's address (as
 * python3 does).  Built without PIE, its PLT entry for malloc then becomes
 * the address every module sees for malloc, although calls still reach
 * the real one.  Prints "ok". */
#include <stdio.h>
#include <stdlib.h>

void *(*volatile alloc_fn)(size_t);

int main(void) {
  alloc_fn = malloc; /* code that takes the address: the canonical PLT entry */
  char *volatile p = alloc_fn(64);
  free(p);
  printf("ok\n");
  return 0;
}
