/* neighbour_cells.c - test_rt_cells.py: pairs of neighbouring live blocks of each size (@aN, @bN) count only their own stores. */
#include <stdint.h>
#include <stdlib.h>

__attribute__((noinline)) static void st(volatile int *p, int n, int k) {
  for (int r = 0; r < k; r++)
    for (int i = 0; i < n; i++)
      p[i] = i;
}

/* Both blocks of n bytes live: a's ints stored 3 times, b's 5 times. */
__attribute__((noinline)) static void use_pair(int *a, int *b, int n) {
  st(a, n / 4, 3);
  st(b, n / 4, 5);
  free(a);
  free(b);
}

int main(void) {
  int bad = 0;
  int *a, *b;
  a = malloc(8); // @a8
  b = malloc(8); // @b8
  use_pair(a, b, 8);
  a = malloc(24); // @a24
  b = malloc(24); // @b24
  use_pair(a, b, 24);
  a = malloc(32); // @a32
  b = malloc(32); // @b32
  use_pair(a, b, 32);
  a = malloc(40); // @a40
  b = malloc(40); // @b40
  use_pair(a, b, 40);
  a = malloc(56); // @a56
  b = malloc(56); // @b56
  use_pair(a, b, 56);
  a = malloc(64); // @a64
  b = malloc(64); // @b64
  use_pair(a, b, 64);
  a = malloc(72); // @a72
  b = malloc(72); // @b72
  use_pair(a, b, 72);
  a = malloc(96); // @a96
  b = malloc(96); // @b96
  use_pair(a, b, 96);
  a = malloc(120); // @a120
  b = malloc(120); // @b120
  use_pair(a, b, 120);
  a = malloc(128); // @a128
  b = malloc(128); // @b128
  use_pair(a, b, 128);
  a = malloc(200); // @a200
  b = malloc(200); // @b200
  use_pair(a, b, 200);
  void *al;
  bad |= posix_memalign(&al, 64, 24); // @aligned64
  bad |= ((uintptr_t)al & 63) != 0;
  st(al, 6, 2);
  free(al);
  return bad;
}
