/* test_heap.c - the tool's heap (profdata/heap.c): warming faults in the
 * heap the run is about to fill, and a slow huge page turns the rest of
 * the heap to small pages (and ends warming) while what was warmed stays.
 * Each case runs in a child of its own, since the heap's state is the
 * process's: RSS grows by the warmed amount when pages come fast, by one
 * huge page when the first one counts as slow; the part of the heap past
 * it is then madvised NOHUGEPAGE ("nh" in its smaps VmFlags). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap.h"

#define MB ((size_t)1 << 20)

static long rss_bytes(void) {
  long pages = 0, rss = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f || fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = -1;
  if (f) fclose(f);
  return rss * sysconf(_SC_PAGESIZE);
}

/* Whether some [heap] mapping has VmFlag `flag` (e.g. "nh", "hg"). */
static int heap_has_flag(const char *flag) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[512];
  int in_heap = 0, found = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (strchr(line, '-') && strchr(line, ' ') &&
        strspn(line, "0123456789abcdef") > 0 &&
        line[strspn(line, "0123456789abcdef")] == '-')
      in_heap = strstr(line, "[heap]") != NULL;
    else if (in_heap && strncmp(line, "VmFlags:", 8) == 0) {
      char want[8];
      snprintf(want, sizeof want, " %s", flag);
      for (char *p = line + 8; (p = strstr(p, want)); p++)
        if (p[3] == ' ' || p[3] == '\n') found = 1;
    }
  }
  if (f) fclose(f);
  return found;
}

static int populate_supported(void) {
  void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int ok = p != MAP_FAILED && madvise(p, 4096, MADV_POPULATE_WRITE) == 0;
  if (p != MAP_FAILED) munmap(p, 4096);
  return ok;
}

/* Child: warm `mb` MB with huge pages counted slow past `slow_ns`; check
 * RSS growth within [lo_mb, hi_mb] and the heap's flags; exit 0 if all
 * held. */
static int child(size_t mb, long long slow_ns, long lo_mb, long hi_mb,
                 int want_nh) {
  mp_heap_setup();
  void *keep = malloc(1000); /* the heap exists */
  mp_heap_set_slow_ns(slow_ns);
  long before = rss_bytes();
  mp_heap_warm_start(mb * MB);
  mp_heap_warm_finish();
  long grown = rss_bytes() - before;
  int ok = 1;
  if (grown < lo_mb * (long)MB || grown > hi_mb * (long)MB) {
    printf("FAIL warm %zu MB (slow past %lld ns): RSS grew %ld KB, want "
           "%ld-%ld MB\n", mb, slow_ns, grown / 1024, lo_mb, hi_mb);
    ok = 0;
  }
  if (heap_has_flag("nh") != want_nh) {
    printf("FAIL warm %zu MB (slow past %lld ns): heap %s NOHUGEPAGE\n", mb,
           slow_ns, want_nh ? "not" : "unexpectedly");
    ok = 0;
  }
  if (!heap_has_flag("hg")) {
    printf("FAIL the heap lost its MADV_HUGEPAGE part\n");
    ok = 0;
  }
  /* warming again after a slow page does nothing */
  before = rss_bytes();
  mp_heap_warm_start(8 * MB);
  mp_heap_warm_finish();
  if (want_nh && rss_bytes() - before > (long)MB) {
    printf("FAIL warming went on after a slow huge page\n");
    ok = 0;
  }
  free(keep);
  fflush(stdout);
  return ok ? 0 : 1;
}

static int run(size_t mb, long long slow_ns, long lo_mb, long hi_mb,
               int want_nh) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(child(mb, slow_ns, lo_mb, hi_mb, want_nh));
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void) {
  if (!populate_supported()) {
    printf("SKIP: the kernel has no MADV_POPULATE_WRITE\n");
    return 0;
  }
  int failures = 0;
  /* fast pages (no page counts as slow under a minute): 12 MB warmed */
  failures += !run(12, 60000000000LL, 10, 16, 0);
  /* every page slow: the first huge page, then small pages for the rest */
  failures += !run(12, 0, 1, 4, 1);
  if (failures) return 1;
  printf("heap: ok\n");
  return 0;
}
