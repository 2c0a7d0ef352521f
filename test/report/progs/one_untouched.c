// one_untouched.c - test_report_text.py: exactly one allocation is never
// accessed, the only one in its context; the other is written and read.
#include <stdlib.h>

int main(void) {
  char *untouched = malloc(64);
  free(untouched);
  volatile char *used = malloc(32);
  used[0] = 1;
  int r = used[0];
  free((char *)used);
  return r - 1;
}
