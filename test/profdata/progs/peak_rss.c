/* peak_rss.c - runs a command and prints its peak resident set in KB on
 * stderr's last line ("peak_kb N"), exiting with the command's status.
 * A small process of its own: the peak the kernel reports for a child
 * includes what its parent had mapped when it forked (a Python test). */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: peak_rss COMMAND [ARG...]\n");
    return 2;
  }
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    _exit(127);
  }
  int status;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
    perror("peak_rss");
    return 2;
  }
  fprintf(stderr, "peak_kb %ld\n", ru.ru_maxrss);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
