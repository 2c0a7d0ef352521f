/* quick_exit.c - test_core_lifecycle.py: processes that end through _exit
 * or _Exit.  argv[1]: 'f' a forked child frees a 96-byte block (3
 * accesses) and calls _exit(5); 'v' a vfork child calls _exit(7) at once;
 * 's' a SIGUSR1 handler calls _exit(4); 'e' main calls _Exit(6).  The
 * parent's (or only) process frees a 64-byte block (2 accesses) and, in
 * 'f' and 'v', prints the child's exit status and exits 0. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_usr1(int sig) {
  (void)sig;
  _exit(4);
}

static void block(size_t n, int accesses) {
  volatile char *p = malloc(n);
  for (int i = 0; i < accesses; i++)
    p[i] = (char)i;
  free((void *)p);
}

static void report_child(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv) {
  char mode = argc > 1 ? argv[1][0] : 'f';
  block(64, 2);
  if (mode == 'f') {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      block(96, 3);
      _exit(5);
    }
    report_child(pid);
  } else if (mode == 'v') {
    pid_t pid = vfork();
    if (pid == 0)
      _exit(7);
    report_child(pid);
  } else if (mode == 's') {
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
  } else if (mode == 'e') {
    _Exit(6);
  }
  return 0;
}
