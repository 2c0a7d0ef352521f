/* unshare_after_alloc.c - a single-threaded program that allocates, then
 * counts its threads and enters a new user namespace (sandboxes and
 * container tools do this; the kernel refuses a process with more than
 * one thread).  Prints "tasks N unshare R" (R: 0, or the errno). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_tasks(void) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += e->d_name[0] != '.';
  if (d)
    closedir(d);
  return n;
}

int main(void) {
  /* Enough allocations, and fast enough, that a runtime starting a thread
   * on its own would have started it by now. */
  for (int i = 0; i < 200000; i++) {
    char *volatile p = malloc(32 + i % 512);
    free(p);
  }
  int tasks = count_tasks();
  int r = unshare(CLONE_NEWUSER) ? errno : 0;
  printf("tasks %d unshare %s\n", tasks, r ? strerror(r) : "ok");
  return 0;
}
