/* paced.h - churn_1ms() (1 ms of small allocations: the ticker wakes and ticks) and thread_faults() (this thread's minor faults), for prefault.c and large_pages.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static void churn_1ms(void) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    char *volatile p = malloc(16);
    free(p);
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 1000000L);
}

static long thread_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}
