/* central_batches.c - test_rt_heap_layout.py: blocks freed by an exiting thread come back once each to another thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 96, SZ = 4000 }; /* the 4 KiB class: thread caches of 16 */
static char *freed[N];

static void *churn(void *arg) {
  (void)arg;
  for (int i = 0; i < N; i++)
    freed[i] = malloc(SZ);
  for (int i = 0; i < N; i++)
    free(freed[i]);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, churn, NULL);
  pthread_join(t, NULL);
  char *got[N];
  int reused = 0, dup = 0;
  for (int i = 0; i < N; i++) {
    got[i] = malloc(SZ);
    for (int j = 0; j < N; j++)
      reused += got[i] == freed[j];
    for (int j = 0; j < i; j++)
      dup += got[i] == got[j];
  }
  printf("reused %d dup %d\n", reused, dup);
  return 0;
}
