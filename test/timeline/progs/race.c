/* race.c - T threads (argv[1]) each allocate K blocks from a context of
 * their own (thread k: size 1000 + 8k), wait for each other at a barrier
 * (the live heap's true peak: every block of every thread), then free
 * theirs all at once, so the frees that follow the peak race each other
 * (test/timeline/test_timeline_runtime.py checks how far the recorded
 * peak's contexts can be from the true ones). */
#include <pthread.h>
#include <stdlib.h>

#define K 2000
#define MAX_T 8

static pthread_barrier_t bar;

static __attribute__((noinline)) void *site0(size_t n) { return malloc(n); }
static __attribute__((noinline)) void *site1(size_t n) { return malloc(n); }
static __attribute__((noinline)) void *site2(size_t n) { return malloc(n); }
static __attribute__((noinline)) void *site3(size_t n) { return malloc(n); }
static __attribute__((noinline)) void *site4(size_t n) { return malloc(n); }
static __attribute__((noinline)) void *site5(size_t n) { return malloc(n); }
static __attribute__((noinline)) void *site6(size_t n) { return malloc(n); }
static __attribute__((noinline)) void *site7(size_t n) { return malloc(n); }
static void *(*const sites[MAX_T])(size_t) = {site0, site1, site2, site3,
                                              site4, site5, site6, site7};

static void *work(void *arg) {
  long k = (long)arg;
  void **v = malloc(K * sizeof *v);
  void **keep = v;
  for (int i = 0; i < K; i++)
    v[i] = sites[k]((size_t)(1000 + 8 * k));
  pthread_barrier_wait(&bar);
  for (int i = 0; i < K; i++)
    free(keep[i]);
  free(keep);
  return NULL;
}

int main(int argc, char **argv) {
  long t = argc > 1 ? atol(argv[1]) : 4;
  if (t < 1 || t > MAX_T)
    return 2;
  pthread_t th[MAX_T];
  pthread_barrier_init(&bar, NULL, (unsigned)t);
  for (long k = 0; k < t; k++)
    pthread_create(&th[k], NULL, work, (void *)k);
  for (long k = 0; k < t; k++)
    pthread_join(th[k], NULL);
  return 0;
}
