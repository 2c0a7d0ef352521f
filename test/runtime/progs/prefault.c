/* prefault.c - test_rt_heap_layout.py: the ticker, not the allocating thread, faults in the pages a growing class needs next. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include "paced.h"

enum { WARM = 2048 + 512, MORE = 3072, PACE = 16 }; /* blocks of the 1 KiB class */
static char *keep[WARM + MORE];

int main(void) {
  for (int i = 0; i < WARM; i++) {
    keep[i] = malloc(1000);
    if (i % PACE == 0)
      churn_1ms();
  }
  long before = thread_faults();
  for (int i = WARM; i < WARM + MORE; i++) {
    keep[i] = malloc(1000);
    if (i % PACE == 0)
      churn_1ms();
  }
  long faults = thread_faults() - before;
  printf("%ld %d\n", faults, MORE / 4);
  for (int i = 0; i < WARM + MORE; i++)
    free(keep[i]);
  return 0;
}
