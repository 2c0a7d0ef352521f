/* histogram_sizes.c - test_core_formats.py: histograms in v4 and v5 (saturation, u16 encoding, long and merged ones, a live block). */
#include <stdlib.h>
#include <string.h>
int main(void) {
  char *p = malloc(100); // @p
  for (int i = 0; i < 100; i++) p[i] = 1;
  for (int i = 0; i < 300; i++) p[8] += 1;
  memset(p, 0, 100);
  free(p);
  for (int k = 0; k < 100; k++) {
    char *q = malloc(20);
    for (int i = 0; i < 300; i++) q[0] = 1;
    free(q);
  }
  for (int k = 0; k < 2; k++) {
    char *r = malloc(4000);
    for (int i = 0; i < 500; i++) r[i * 8] = 1;
    free(r);
  }
  char *live = malloc(3000);
  for (int i = 0; i < 100; i++) live[i * 8] = 1;
  return 0;
}
