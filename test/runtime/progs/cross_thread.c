/* cross_thread.c - test_rt_modes.py: blocks allocated on one thread and used and freed on another. */
#include <pthread.h>
#include <stdlib.h>
__attribute__((noinline)) static void st(volatile int *p, int n, int k) {
  for (int r = 0; r < k; r++)
    for (int i = 0; i < n; i++)
      p[i] = i;
}
static int *from_thread[4];
static int *from_main[4];
static void *worker(void *arg) {
  long t = (long)arg;
  int *mine = malloc(40); // @thread_alloc
  st(mine, 10, 2);
  from_thread[t] = mine;
  st(from_main[t], 18, 1);
  free(from_main[t]);
  int *local = malloc(104); // @thread_local
  st(local, 26, 1);
  free(local);
  return 0;
}
int main(void) {
  pthread_t th[4];
  for (long t = 0; t < 4; t++) {
    from_main[t] = malloc(72); // @main_alloc
    st(from_main[t], 18, 2);
  }
  for (long t = 0; t < 4; t++)
    pthread_create(&th[t], 0, worker, (void *)t);
  for (int t = 0; t < 4; t++)
    pthread_join(th[t], 0);
  for (int t = 0; t < 4; t++) {
    st(from_thread[t], 10, 1);
    free(from_thread[t]);
  }
  return 0;
}
