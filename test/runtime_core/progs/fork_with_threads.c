/* fork_with_threads.c - test_core_lifecycle.py: children forked while threads allocate and dump can allocate and dump. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sanitizer/memprof_interface.h>
static volatile int stop;
static void *churn(void *arg) {
  while (!stop) {
    char *p = malloc(16 + (rand() % 5000));
    p[0] = 1;
    char *s = strdup("churn");
    free(p);
    free(s);
    if ((long)arg == 1)
      __memprof_profile_dump();
  }
  return arg;
}
int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++)
    pthread_create(&t[i], 0, churn, (void *)i);
  int ok = 0;
  for (int i = 0; i < 40; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(5); /* a hung child must not outlive the test */
      char *c = malloc(6000); /* outside the churn sizes */
      c[0] = 1;
      c[1] = 1;
      free(c);
      __memprof_profile_dump();
      _exit(0);
    }
    int st;
    ok += waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  stop = 1;
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], 0);
  printf("children ok %d\n", ok);
  return 0;
}
