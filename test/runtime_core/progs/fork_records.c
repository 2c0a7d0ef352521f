/* fork_records.c - test_core_lifecycle.py: a forked child writes its own records and keeps the blocks it inherited. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
  char *keep = malloc(256);
  keep[0] = 1;
  char *pre = malloc(128);
  pre[0] = 1; pre[1] = 1;
  free(pre);
  pid_t pid = fork();
  if (pid == 0) {
    char *c = malloc(96);
    c[0] = 1; c[1] = 1; c[2] = 1;
    free(c);
    keep[1] = 1;
    exit(0);
  }
  waitpid(pid, 0, 0);
  return 0;
}
