/* check.h - what the libmemprof-hotcold test programs (C and C++) share:
 * CHECK, which counts checks and prints one line per failure, and
 * jemalloc's count of the bytes allocated in the process (read through
 * memprof_hotcold_mallctl) to see a freed block come back. */
#ifndef HC_TEST_CHECK_H
#define HC_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "memprof_hotcold.h"

static int checks, fails;
#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    checks++;                                                                   \
    if (!(cond)) {                                                              \
      fails++;                                                                  \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                    \
      printf(__VA_ARGS__);                                                      \
      printf("\n");                                                             \
    }                                                                           \
  } while (0)

static inline int aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

/* Bytes allocated in the process, the thread's cache given back first (a
 * freed small block waits there otherwise). */
static inline size_t allocated_bytes(void) {
  memprof_hotcold_mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
  uint64_t epoch = 1;
  size_t sz = sizeof epoch, v = 0;
  memprof_hotcold_mallctl("epoch", &epoch, &sz, &epoch, sizeof epoch);
  sz = sizeof v;
  memprof_hotcold_mallctl("stats.allocated", &v, &sz, NULL, 0);
  return v;
}

#endif
