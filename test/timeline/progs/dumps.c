/* dumps.c - a timeline written twice and by a forked child: a block of
 * 1111 bytes, a dump (__memprof_profile_dump), a block of 2222 bytes, a
 * fork whose child allocates 3333 bytes and exits, then the parent exits;
 * all three blocks are leaks (test/timeline/test_timeline_runtime.py). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int __memprof_profile_dump(void);

static __attribute__((noinline)) void *leak(size_t n) { return malloc(n); }

int main(void) {
  void *volatile a = leak(1111);
  __memprof_profile_dump();
  void *volatile b = leak(2222);
  pid_t p = fork();
  if (p == 0) {
    void *volatile c = leak(3333);
    (void)c;
    exit(0);
  }
  waitpid(p, NULL, 0);
  (void)a, (void)b;
  return 0;
}
