/* one_frame_sites.c - test_core_lifecycle.py: 200 interleaved sites with one-frame stacks, each with exact counts. */
#include <stdlib.h>
#define SITE(i) __attribute__((noinline)) void site##i(void) { \
    volatile char *p = malloc(16 + (i));                          \
    p[0] = 1;                                                     \
    free((void *)p); }
#define S10(t) SITE(t##0) SITE(t##1) SITE(t##2) SITE(t##3) SITE(t##4) \
               SITE(t##5) SITE(t##6) SITE(t##7) SITE(t##8) SITE(t##9)
S10() S10(1) S10(2) S10(3) S10(4) S10(5) S10(6) S10(7) S10(8) S10(9)
S10(10) S10(11) S10(12) S10(13) S10(14) S10(15) S10(16) S10(17) S10(18) S10(19)
#define P10(t) site##t##0, site##t##1, site##t##2, site##t##3, site##t##4, \
               site##t##5, site##t##6, site##t##7, site##t##8, site##t##9,
static void (*const sites[200])(void) = {
  P10() P10(1) P10(2) P10(3) P10(4) P10(5) P10(6) P10(7) P10(8) P10(9)
  P10(10) P10(11) P10(12) P10(13) P10(14) P10(15) P10(16) P10(17) P10(18) P10(19)
};
int main(void) {
  for (int r = 0; r < 50; r++)
    for (int i = 0; i < 200; i++)
      for (int k = 0; k < i % 7 + 1; k++)
        sites[i]();
  return 0;
}
