/* dumps_with_threads.c - test_core_lifecycle.py: 20 dumps while four threads allocate and free. */
#include <pthread.h>
#include <stdlib.h>
#include <sanitizer/memprof_interface.h>
#define N 20000
void *worker(void *arg) {
  for (int i = 0; i < N; i++) {
    char *p = malloc(16 + (i % 7) * 100);
    p[0] = 1; p[1] = 1; p[2] = 1;
    free(p);
  }
  return arg;
}
int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < 20; i++) __memprof_profile_dump();
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  return 0;
}
