/* fresh_order.c - test_rt_heap_layout.py: never-used slots of three classes are handed out in address order. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1000 };
static char *a[N], *b[N], *c[N];

static int steps(char **v, intptr_t slot) {
  int bad = 0;
  for (int i = 1; i < N; i++)
    bad += v[i] - v[i - 1] != slot;
  return bad;
}

int main(void) {
  for (int i = 0; i < N; i++) {
    a[i] = malloc(88);
    b[i] = malloc(40);
    c[i] = malloc(150);
  }
  printf("%d %d %d\n", steps(a, 128), steps(b, 64), steps(c, 192));
  return 0;
}
