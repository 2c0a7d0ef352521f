/* sample_threads.c - sampling across threads, fork and signal handlers
 * (test_rt_sample.py).  THREADS threads each allocate PER_THREAD blocks of
 * 64 bytes at one site, then wait; meanwhile the main thread sends them
 * SIGUSR1 until handlers ran HANDLER_RUNS times: the handler allocates and
 * frees a block of 1000 bytes (its own site) and counts its runs.  Then the process forks: the child allocates CHILD_N
 * blocks of 96 bytes and exits (writing its own profile).  Prints the
 * handler's runs, which the test compares with the estimate. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define PER_THREAD 100000
#define CHILD_N 50000
#define HANDLER_RUNS 2000

static volatile long handler_runs;
static volatile int running = THREADS, stop;

static __attribute__((noinline)) void handler_site(void) {
  char *volatile p = malloc(1000);
  p[0] = 1;
  free(p);
}

static void on_usr1(int sig) {
  (void)sig;
  handler_site();
  __atomic_fetch_add(&handler_runs, 1, __ATOMIC_RELAXED);
}

static __attribute__((noinline)) void thread_site(void) {
  for (long i = 0; i < PER_THREAD; i++) {
    char *volatile p = malloc(64);
    p[0] = 1;
    free(p);
  }
}

static void *worker(void *arg) {
  (void)arg;
  thread_site();
  __atomic_fetch_sub(&running, 1, __ATOMIC_RELAXED);
  while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
    usleep(100);
  return NULL;
}

static __attribute__((noinline)) void child_site(void) {
  for (long i = 0; i < CHILD_N; i++) {
    char *volatile p = malloc(96);
    p[0] = 1;
    free(p);
  }
}

int main(void) {
  signal(SIGUSR1, on_usr1);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  while (__atomic_load_n(&running, __ATOMIC_RELAXED) > 0 ||
         __atomic_load_n(&handler_runs, __ATOMIC_RELAXED) < HANDLER_RUNS)
    for (int i = 0; i < THREADS; i++) {
      pthread_kill(t[i], SIGUSR1);
      usleep(20);
    }
  __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  pid_t pid = fork();
  if (pid == 0) {
    child_site();
    exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  printf("%ld\n", handler_runs);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
