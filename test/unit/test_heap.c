/* test_heap.c - the tool's heap (profdata/heap.c): its first 12 MiB are
 * small pages (NOHUGEPAGE, "nh" in smaps' VmFlags) and the rest is
 * MADV_HUGEPAGE ("hg"); with no small start, a checkpoint after a step
 * whose kernel time exceeds the threshold for the memory it gained turns
 * the rest of the heap to small pages while the part in use keeps "hg"; a
 * step within the threshold, or one that gained too little memory to
 * judge, changes nothing.  Each case runs in a child of its own, since the
 * heap's state is the process's; kernel time is made on purpose (mapping
 * and unmapping populated memory), so the outcome does not depend on how
 * fast this machine's page faults are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heap.h"

#define MB ((size_t)1 << 20)

/* Whether some [heap] mapping has VmFlag `flag` ("nh", "hg"). */
static int heap_has_flag(const char *flag) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[512];
  int in_heap = 0, found = 0;
  while (f && fgets(line, sizeof line, f)) {
    size_t hex = strspn(line, "0123456789abcdef");
    if (hex > 0 && line[hex] == '-')
      in_heap = strstr(line, "[heap]") != NULL;
    else if (in_heap && strncmp(line, "VmFlags:", 8) == 0)
      for (char *p = line + 8; (p = strstr(p, flag)); p++)
        if (p[-1] == ' ' && (p[2] == ' ' || p[2] == '\n')) found = 1;
  }
  if (f) fclose(f);
  return found;
}

/* Whether the mapping holding address a has VmFlag `flag`. */
static int flag_at(const void *a, const char *flag) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[512];
  int here = 0, found = 0;
  while (f && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    size_t hex = strspn(line, "0123456789abcdef");
    if (hex > 0 && line[hex] == '-' && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
      here = lo <= (unsigned long)a && (unsigned long)a < hi;
    else if (here && strncmp(line, "VmFlags:", 8) == 0)
      for (char *p = line + 8; (p = strstr(p, flag)); p++)
        if (p[-1] == ' ' && (p[2] == ' ' || p[2] == '\n')) found = 1;
  }
  if (f) fclose(f);
  return found;
}

/* Spend about `ms` of wall time mostly in the kernel. */
static void burn_kernel(int ms) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    void *p = mmap(NULL, MB, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p != MAP_FAILED) munmap(p, MB);
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 <
           ms);
}

/* Child: one step that gains `gain_mb` of heap and burns kernel time,
 * judged with the given threshold; exit 0 if the heap's advice is then
 * as expected. */
static int child(const char *what, size_t gain_mb, long long us_per_mb,
                 long long other_us, int want_nh) {
  mp_heap_set_small_first(0);
  mp_heap_setup();
  mp_heap_set_slow_rate(us_per_mb, other_us);
  mp_heap_checkpoint();
  volatile char *p = malloc(gain_mb * MB);
  for (size_t i = 0; p && i < gain_mb * MB; i += 4096) p[i] = 1;
  burn_kernel(200);
  mp_heap_checkpoint();
  int ok = 1;
  if (heap_has_flag("nh") != want_nh) {
    printf("FAIL %s: the heap's rest %s NOHUGEPAGE\n", what,
           want_nh ? "is not" : "is unexpectedly");
    ok = 0;
  }
  if (!heap_has_flag("hg")) {
    printf("FAIL %s: no part of the heap is MADV_HUGEPAGE any more\n", what);
    ok = 0;
  }
  free((void *)p);
  fflush(stdout);
  return ok ? 0 : 1;
}

static int wait_child(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int run(const char *what, size_t gain_mb, long long us_per_mb,
               long long other_us, int want_nh) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(child(what, gain_mb, us_per_mb, other_us, want_nh));
  return wait_child(pid);
}

/* Child: the default heap; the first MiBs of growth (past the huge page
 * the heap's top was in) are small pages, growth past 12 MiB is in
 * huge-page advice. */
static int small_start(void) {
  mp_heap_setup();
  char *first = malloc(4 * MB), *pad = malloc(12 * MB), *later = malloc(4 * MB);
  int ok = 1;
  if (!first || !pad || !later) return 1;
  first[0] = later[0] = 1;
  if (!flag_at(first + 3 * MB, "nh") || flag_at(first + 3 * MB, "hg")) {
    printf("FAIL small start: the heap's first block is not in small pages\n");
    ok = 0;
  }
  if (!flag_at(later + 2 * MB, "hg")) {
    printf("FAIL small start: a block past 12 MiB is not MADV_HUGEPAGE\n");
    ok = 0;
  }
  fflush(stdout);
  return ok ? 0 : 1;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#endif

int main(void) {
#ifdef UNDER_ASAN
  /* ASan's malloc replaces glibc's heap, which is what heap.c advises. */
  printf("SKIP: built with AddressSanitizer\n");
  return 0;
#endif
  int failures = 0;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(small_start());
  failures += !wait_child(pid);
  failures += !run("slow step", 16, 0, 0, 1);
  failures += !run("fast step", 16, 1000000000LL, 0, 0);
  failures += !run("small step", 1, 0, 0, 0);
  if (failures) return 1;
  printf("heap: ok\n");
  return 0;
}
