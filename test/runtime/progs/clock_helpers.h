/* clock_helpers.h - the real clock in ms, naps, the process's threads and a thread's wake-ups, for the programs of test_rt_clock.py. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
static void nap_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}
/* Threads of the process; *other: the tid of one that is not main. */
static int tasks(int *other) {
  int n = 0;
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') {
      n++;
      if (atoi(e->d_name) != getpid())
        *other = atoi(e->d_name);
    }
  closedir(d);
  return n;
}
/* How often thread tid went to sleep of its own accord. */
static long wakeups(int tid) {
  char path[64], line[128];
  long v = -1;
  snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "voluntary_ctxt_switches:", 24))
      v = atol(line + 24);
  if (f)
    fclose(f);
  return v;
}
