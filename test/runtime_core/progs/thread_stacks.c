/* thread_stacks.c - test_core_lifecycle.py: stacks of threads' allocations, and a 41-deep one cut at malloc_context_size. */
#include <pthread.h>
#include <stdlib.h>
__attribute__((noinline)) char *deep(int n, size_t sz) {
  if (n == 0) return malloc(sz);
  char *r = deep(n - 1, sz);
  return r;
}
void *worker(void *arg) {
  for (int i = 0; i < 100; i++) {
    char *p = deep(3, 100);
    for (int j = 0; j < 100; j++) p[j] = (char)j;
    free(p);
  }
  return arg;
}
int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  char *d = deep(40, 64);
  d[0] = 1;
  free(d);
  return 0;
}
