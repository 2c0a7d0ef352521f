/* fork_ticker.c - test_rt_clock.py: a forked child starts its own ticker; its block lifetimes stay within real-clock bounds. */
#include "clock_helpers.h"
#include <sys/wait.h>
int main(void) {
  char *volatile warm = malloc(16); /* the parent's ticker starts */
  free(warm);
  pid_t pid = fork();
  if (pid == 0) {
    /* The ticker is not copied into the child: it starts its own. */
    for (int i = 0; i < 200; i++) {
      long long t0 = now_ms();
      char *volatile p = malloc(5000);
      long long t1 = now_ms();
      nap_ms(i == 0 ? 80 : 0);
      long long t2 = now_ms();
      free(p);
      long long t3 = now_ms();
      if (i == 0)
        printf("child %lld %lld %d\n", t2 - t1, t3 - t0, tasks(&(int){0}));
    }
    exit(0); /* exit, not _exit: the child writes its profile at exit */
  }
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
