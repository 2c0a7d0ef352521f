/* ticker_rate.c - test_rt_clock.py: the ticker's wake-ups while allocations come slowly, then flat out. */
#include "clock_helpers.h"
static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
/* malloc/free pairs for `us` microseconds, one every `gap` us (0: flat out). */
static void pairs(double us, double gap) {
  double end = now_us() + us, next = 0;
  while (now_us() < end) {
    if (gap > 0) {
      while (now_us() < next)
        ;
      next = now_us() + gap;
    }
    char *volatile p = malloc(32);
    free(p);
  }
}
int main(void) {
  pairs(1000, 0); /* the ticker starts */
  int ticker = 0;
  tasks(&ticker);
  pairs(100000, 100); /* it sees the slow rate */
  long w0 = wakeups(ticker);
  pairs(400000, 100);
  long w1 = wakeups(ticker);
  pairs(300000, 0);
  long w2 = wakeups(ticker);
  printf("%d %ld %ld\n", ticker != 0, w1 - w0, w2 - w1);
  return 0;
}
