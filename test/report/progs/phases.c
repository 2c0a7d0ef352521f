/* phases.c - a program whose live heap has a known shape: it leaks two
 * blocks of 700 bytes (leak_c), then holds four blocks of 10000 bytes
 * (hold_a, the peak: 41400 bytes in 6 blocks), frees them, then holds
 * three of 3000 bytes (hold_b) and frees those.  Every context has its own
 * block size, so a test finds each one's stack id in the raw profile by
 * size.  No stdio: the heap holds nothing the test does not know of. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile keep[8];

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

__attribute__((noinline)) static void leak_c(void) {
  for (int i = 0; i < 2; i++) keep[6 + i] = memset(malloc(700), 1, 700);
}

__attribute__((noinline)) static void hold_a(void) {
  for (int i = 0; i < 4; i++) keep[i] = memset(malloc(10000), 2, 10000);
}

__attribute__((noinline)) static void hold_b(void) {
  for (int i = 0; i < 3; i++) keep[i] = memset(malloc(3000), 3, 3000);
}

static void free_held(int n) {
  for (int i = 0; i < n; i++) free(keep[i]), keep[i] = NULL;
}

int main(void) {
  leak_c();
  pause_ms(30);
  hold_a();
  pause_ms(60);
  free_held(4);
  pause_ms(30);
  hold_b();
  pause_ms(60);
  free_held(3);
  pause_ms(30);
  return 0;
}
