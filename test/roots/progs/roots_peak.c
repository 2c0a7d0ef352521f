/* roots_peak.c - a heap that rises to known highs, for the censuses at a
 * new high (roots_peak_step_kb; test/roots/test_roots_peak.py).
 *
 * Usage: roots_peak N M [T]
 * Allocates N blocks of 16 KiB one at a time into the global `slots`,
 * frees them all, then allocates M more the same way and exits with them
 * live.  Each block is stored only after malloc returns, so a census taken
 * by the allocation of a block finds it held by the thread alone.  With T
 * (a number of threads), T threads each allocate N blocks of 16 KiB at
 * once and free them once every thread has allocated its own (a barrier:
 * no block is freed while a census taken by an allocation runs), the main
 * thread waiting, before all that.  Allocates nothing else (no stdio). */
#include <pthread.h>
#include <stdlib.h>

#define BLOCK 16384
#define MAX_SLOTS 64

static char *slots[MAX_SLOTS];
static pthread_barrier_t allocated;

static void *churn(void *arg) {
  int n = (int)(long)arg;
  char *mine[MAX_SLOTS];
  for (int i = 0; i < n; i++)
    mine[i] = malloc(BLOCK);
  pthread_barrier_wait(&allocated);
  for (int i = 0; i < n; i++)
    free(mine[i]);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  int n = atoi(argv[1]), m = atoi(argv[2]), t = argc > 3 ? atoi(argv[3]) : 0;
  if (n > MAX_SLOTS || m > MAX_SLOTS || t > 8)
    return 2;
  pthread_t th[8];
  if (t > 0)
    pthread_barrier_init(&allocated, NULL, (unsigned)t);
  for (int i = 0; i < t; i++)
    pthread_create(&th[i], NULL, churn, (void *)(long)n);
  for (int i = 0; i < t; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < n; i++)
    slots[i] = malloc(BLOCK);
  for (int i = 0; i < n; i++) {
    free(slots[i]);
    slots[i] = NULL;
  }
  for (int i = 0; i < m; i++)
    slots[i] = malloc(BLOCK);
  return 0;
}
