/* terminated.c - test_core_lifecycle.py: keeps a 64-byte block (2
 * accesses) live, says "ready" and waits for a signal.  With argv[1] 'h'
 * it handles SIGTERM itself: "own handler", then _exit(9). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void own(int sig) {
  (void)sig;
  static const char msg[] = "own handler\n";
  write(1, msg, sizeof msg - 1);
  _exit(9);
}

int main(int argc, char **argv) {
  if (argc > 1 && argv[1][0] == 'h')
    signal(SIGTERM, own);
  volatile char *p = malloc(64);
  p[0] = 1;
  p[1] = 2;
  printf("ready\n");
  fflush(stdout);
  for (;;)
    pause();
}
