/* large_pages.c - test_rt_large_pages.py: faults while filling a large block, and the resident pages of touched and untouched ones. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "paced.h"

enum { STEP = 64 << 10 };

/* Instrumented stores, one per 64 bytes: each cell's count goes up. */
static void fill(volatile char *p, size_t n) {
  for (size_t i = 0; i < n; i += STEP) {
    for (size_t j = i; j < i + STEP && j < n; j += 64)
      p[j] = 1;
    churn_1ms();
  }
}

static long resident_pages(void *p, size_t n) {
  unsigned char vec[(64 << 20) / 4096];
  if (mincore(p, n, vec) != 0)
    return -1;
  long r = 0;
  for (size_t i = 0; i < n / 4096; i++)
    r += vec[i] & 1;
  return r;
}

int main(void) {
  for (int i = 0; i < 100; i++)
    churn_1ms(); /* the ticker runs */
  size_t big = 8 << 20;
  char *a = malloc(big);
  long before = thread_faults();
  fill(a, big);
  printf("filled %ld\n", thread_faults() - before);

  size_t huge = 64 << 20;
  char *b = malloc(huge);
  churn_1ms();
  churn_1ms();
  printf("untouched %ld\n", resident_pages(b, huge));
  char *c = malloc(huge);
  fill(c, 1 << 20);
  for (int i = 0; i < 5; i++)
    churn_1ms();
  printf("touched_1m %ld\n", resident_pages(c, huge));
  free(a);
  free(b);
  free(c);
  return 0;
}
