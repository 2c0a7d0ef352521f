/* deadly_signals.c - test_core_lifecycle.py: argv[1] 's' faults, 'a' aborts, else exits 3; the profile is written or not. */
#include <stdlib.h>
int main(int argc, char **argv) {
  char *p = malloc(64);
  p[0] = 1; p[1] = 2; p[2] = 3;
  if (argv[1][0] == 's') { volatile int *z = 0; *z = 1; }
  if (argv[1][0] == 'a') abort();
  return 3;
}
