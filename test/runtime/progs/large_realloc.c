/* large_realloc.c - test_rt_large_remap.py: threads grow and shrink large
 * blocks with realloc and check that every byte survives each move. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define BASE (256 << 10) /* above the largest size class */
#define GROW 12
#define SHRINK 4

static pthread_barrier_t start;
static int failed;

static void fill(long *p, size_t from, size_t to, long seed) {
  for (size_t i = from / 8; i < to / 8; i++)
    p[i] = seed ^ (long)i;
}

static void check(const long *p, size_t n, long seed) {
  for (size_t i = 0; i < n / 8; i++)
    if (p[i] != (seed ^ (long)i))
      __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
}

static void *grower(void *arg) {
  long seed = (long)arg * 0x9e3779b97f4a7c15L;
  pthread_barrier_wait(&start);
  size_t n = BASE;
  long *p = malloc(n); // @first
  fill(p, 0, n, seed);
  for (int k = 1; k <= GROW; k++) {
    size_t m = (size_t)BASE * (k + 1);
    p = realloc(p, m); // @grow
    check(p, n, seed);
    fill(p, n, m, seed);
    n = m;
  }
  for (int k = 1; k <= SHRINK; k++) {
    n -= 2 * (size_t)BASE;
    p = realloc(p, n); // @shrink
    check(p, n, seed);
  }
  free(p);
  return NULL;
}

int main(void) {
  pthread_t t[THREADS];
  pthread_barrier_init(&start, NULL, THREADS);
  for (long i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, grower, (void *)(i + 1));
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  printf("failed %d\n", failed);
  return failed;
}
