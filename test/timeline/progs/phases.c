/* phases.c - a program whose live heap has a known peak and known leaks,
 * for the timeline tests (test/timeline/test_timeline_runtime.py).
 *
 *   phase A: N_A blocks of SIZE_A and N_D blocks of SIZE_D (large blocks),
 *            by T threads (argv[1], default 1), each its share;
 *   pause;   one block of SIZE_C (the peak: A + D + C, reached by C);
 *   pause;   A and D freed (by the T threads), then N_B blocks of SIZE_B;
 *   pause;   exit with B and C still live (the leaks).
 *
 * Each size belongs to one allocation site, so the test tells the contexts
 * apart by the sizes in the raw profile's MIBs.  No stdio before the end:
 * libc's buffers would be allocations of their own. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define N_A 1200
#define SIZE_A 4000
#define N_D 4
#define SIZE_D 300000
#define SIZE_C 777
#define N_B 100
#define SIZE_B 3000
#define MAX_T 8

static void *a[N_A], *d[N_D], *b[N_B];
static int threads = 1;

static __attribute__((noinline)) void *alloc_a(void) { return malloc(SIZE_A); }
static __attribute__((noinline)) void *alloc_d(void) { return malloc(SIZE_D); }
static __attribute__((noinline)) void *alloc_c(void) { return malloc(SIZE_C); }
static __attribute__((noinline)) void *alloc_b(void) { return malloc(SIZE_B); }

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Thread k's share of A and D: every threads-th block from k. */
static void *grow(void *arg) {
  long k = (long)arg;
  for (long i = k; i < N_A; i += threads)
    a[i] = alloc_a();
  for (long i = k; i < N_D; i += threads)
    d[i] = alloc_d();
  return NULL;
}

static void *shrink(void *arg) {
  long k = (long)arg;
  for (long i = k; i < N_A; i += threads)
    free(a[i]);
  for (long i = k; i < N_D; i += threads)
    free(d[i]);
  return NULL;
}

static void on_threads(void *(*fn)(void *)) {
  if (threads == 1) {
    fn((void *)0);
    return;
  }
  pthread_t t[MAX_T];
  for (long k = 0; k < threads; k++)
    pthread_create(&t[k], NULL, fn, (void *)k);
  for (long k = 0; k < threads; k++)
    pthread_join(t[k], NULL);
}

int main(int argc, char **argv) {
  if (argc > 1)
    threads = atoi(argv[1]);
  if (threads < 1 || threads > MAX_T)
    return 2;
  long pause = argc > 2 ? atol(argv[2]) : 60;
  on_threads(grow);
  pause_ms(pause);
  void *volatile c = alloc_c();
  (void)c;
  pause_ms(pause);
  on_threads(shrink);
  for (int i = 0; i < N_B; i++)
    b[i] = alloc_b();
  pause_ms(pause);
  return 0;
}
