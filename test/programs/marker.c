/* marker.c - preloaded beside our runtime by test_real_programs.py.  Its
 * constructor allocates one block of MARK_SIZE bytes and keeps it, so
 * every profile holds one context the test can symbolize and count
 * exactly (the programs under test carry no debug information): the
 * process's own, and, as a block live at fork, each forked child's. */
#include <stdlib.h>

#define MARK_SIZE 4321

void *memprof_test_mark;

__attribute__((noinline)) void *memprof_test_mark_alloc(void) {
  return malloc(MARK_SIZE);
}

__attribute__((constructor)) static void mark(void) {
  memprof_test_mark = memprof_test_mark_alloc();
}
