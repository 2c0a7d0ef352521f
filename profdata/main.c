/* main.c - placeholder until the CLI lands. */
#include <stdio.h>
int main(void) {
  fprintf(stderr, "memprof-profdata: not built yet\n");
  return 1;
}
