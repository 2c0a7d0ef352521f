/* basic_sites.c - test_core_formats.py: three sites with exact counts, read back from raw v3/v4/v5 by llvm-profdata 19 and 22. */
#include <stdlib.h>
#include <string.h>
int main(void) {
  int *a = malloc(40); // @a
  for (int i = 0; i < 10; i++) a[i] = i;
  int s = 0;
  for (int i = 0; i < 10; i++) s += a[i];
  free(a);
  char *x = malloc(10); // @x
  memset(x, 0, 10);
  free(x);
  char *live = malloc(1000); // @live
  for (int i = 0; i < 1000; i += 8) live[i] = 1;
  return s == 45 ? 0 : 1;
}
