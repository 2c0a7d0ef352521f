/* temporaries.c - temporary allocations with known counts
 * (test_rt_temporaries.py): a block is temporary when its thread frees it
 * before allocating again.  Each context allocates its own size, so the
 * test tells them apart by MinSize. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void *at(size_t n) { return malloc(n); }
NOINLINE void *at_too(size_t n) { return malloc(n); }

static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 5000; i++) { /* 5000 temporaries per thread, size 24 */
    char *t = at(24);
    t[0] = 1;
    free(t);
  }
  return at(40); /* freed by main: not temporary */
}

int main(void) {
  for (int i = 0; i < 1000; i++) { /* 1000 of 1000 */
    char *t = at(64);
    memset(t, 1, 64);
    free(t);
  }
  void *keep[100];
  for (int i = 0; i < 100; i++) keep[i] = at(32);
  for (int i = 0; i < 100; i++) free(keep[i]); /* 1 of 100: keep[99] */
  for (int i = 0; i < 10; i++) {
    void *a = at(128), *b = at_too(16);
    free(a); /* 0 of 10: b came after it */
    free(b); /* 10 of 10 */
  }
  char *r = at(8);
  r = realloc(r, 100000); /* moves: the new block is the last one */
  __asm__ volatile("" : : "r"(r) : "memory"); /* kept, not folded away */
  free(r);                /* 1 of 1 (realloc's context), and 0 of 1 (size 8) */
  pthread_t th[2];
  void *res[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, worker, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], &res[i]);
  for (int i = 0; i < 2; i++) free(res[i]);
  void *live = at(200); /* live at exit: never temporary */
  printf("%p\n", live != NULL ? (void *)1 : NULL);
  return 0;
}
