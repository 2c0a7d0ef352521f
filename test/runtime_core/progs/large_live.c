/* large_live.c - test_core_lifecycle.py: large blocks live at exit are reported with their counts. */
#include <malloc.h>
#include <stdlib.h>
int main(void) {
  char *big = malloc(1 << 20); // @big
  for (int i = 0; i < (1 << 20); i += 64) big[i] = 1;       /* 16384 */
  char *al = memalign(1 << 16, 300000);
  for (int i = 0; i < 300000; i += 100) al[i] = 1;          /* 3000 */
  char *gone = malloc(200000);
  for (int i = 0; i < 200000; i += 1000) gone[i] = 1;       /* 200 */
  free(gone);
  return ((unsigned long)al & 0xffff) != 0;
}
