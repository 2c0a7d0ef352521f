// c_malloc.c - test_check.py's C program (CheckMalloc): one block kept
// 1.2 s and touched once (cold under a 1 s lifetime threshold), and
// blocks written hard and freed at once.  clang hints neither: it rewrites
// only operator new, so check must say why each got no hint.
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile sink;

__attribute__((noinline)) char *keep_block(void) { return malloc(1 << 16); }
__attribute__((noinline)) char *busy_block(void) { return calloc(1, 512); }

int main(void) {
  char *kept = keep_block();
  kept[0] = 1;
  long sum = 0;
  for (int r = 0; r < 500; r++) {
    char *b = busy_block();
    for (int pass = 0; pass < 4; pass++) {
      memset(b, r + pass, 512);
      for (int i = 0; i < 512; i += 8) sum += b[i];
    }
    sink = b;
    free(b);
  }
  struct timespec ts = {1, 200000000};
  nanosleep(&ts, NULL);
  sum += kept[0];
  free(kept);
  sink = (void *)sum;
  return 0;
}
