/* schedule.c - a known allocation schedule for the timeline's allocation
 * counts (test/report/test_report_alloc_rate.py), run with
 * libmemprof.so preloaded and timeline_interval_ms=100:
 *
 *   sleep FIRST ms (argv[1], default 150), then PHASE[0] malloc/free
 *   pairs; sleep 150 ms, then PHASE[1] pairs; ... ; exit.
 *
 * Each phase takes far less than the interval and each pause more, so
 * the first malloc of a phase takes a census (it counts itself), which
 * then holds the last PHASE[k-1] - 1 pairs of the phase before and that
 * one: PHASE[k-1] allocations; the last census, when the file is
 * written, holds PHASE[last] - 1.  No stdio: libc's buffers would be
 * allocations of their own. */
#include <stdlib.h>
#include <time.h>

static const int PHASE[] = {1000, 3000, 500, 2000};

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
  long first = argc > 1 ? atol(argv[1]) : 150;
  for (size_t k = 0; k < sizeof PHASE / sizeof *PHASE; k++) {
    pause_ms(k ? 150 : first);
    for (int i = 0; i < PHASE[k]; i++) {
      void *volatile p = malloc(16 + (size_t)k * 16);
      free(p);
    }
  }
  return 0;
}
