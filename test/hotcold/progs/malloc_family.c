/* malloc_family.c - the C allocation API of libmemprof-hotcold: each
 * function's contract (zeroing, alignment, errors), blocks that glibc
 * allocates internally (strdup, getline, open_memstream, reallocarray)
 * going through it and back, a cold block made by operator new(size_t,
 * __hot_cold_t) in one thread freed with free() in another, and a forked
 * child allocating and freeing cold and unhinted blocks.  "Back" is
 * measured with jemalloc's own count of allocated bytes.
 * Prints one line per failed check and "malloc_family: CHECKS checks,
 * FAILS failures"; exits 1 on any failure.  Build with -fno-builtin: the
 * compiler would otherwise drop a strdup freed unused, or fold a failing
 * calloc's NULL check. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* operator new(size_t, __hot_cold_t), by its mangled name. */
void *_Znwm12__hot_cold_t(size_t n, unsigned char hint);

static int all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i])
      return 0;
  return 1;
}

static void contracts(void) {
  void *p = malloc(0);
  CHECK(p != NULL, "malloc(0)");
  free(p);
  free(NULL);

  unsigned char *z = malloc(5000);
  memset(z, 0xff, 5000);
  free(z);
  z = calloc(1000, 5);
  CHECK(z && all_zero(z, 5000), "calloc zeroes");
  free(z);
  errno = 0;
  CHECK(calloc(SIZE_MAX / 2, 4) == NULL && errno == ENOMEM, "calloc overflow: errno %d", errno);

  char *s = realloc(NULL, 10);
  CHECK(s != NULL, "realloc(NULL, 10)");
  memcpy(s, "abcdefghi", 10);
  s = realloc(s, 100000);
  CHECK(s && !strcmp(s, "abcdefghi"), "realloc grows, keeps contents");
  s = realloc(s, 4);
  CHECK(s && !memcmp(s, "abcd", 4), "realloc shrinks, keeps contents");
  free(s);

  void *m = NULL;
  CHECK(posix_memalign(&m, 4096, 100) == 0 && aligned(m, 4096), "posix_memalign 4096");
  free(m);
  CHECK(posix_memalign(&m, 24, 100) == EINVAL, "posix_memalign(24) is EINVAL");
  m = aligned_alloc(256, 512);
  CHECK(m && aligned(m, 256), "aligned_alloc 256");
  free(m);
  m = memalign(1 << 16, 10);
  CHECK(m && aligned(m, 1 << 16), "memalign 64 KiB");
  free(m);
  m = valloc(10);
  CHECK(m && aligned(m, 4096), "valloc");
  free(m);
  m = pvalloc(5000);
  CHECK(m && aligned(m, 4096) && malloc_usable_size(m) >= 8192, "pvalloc rounds to pages: %zu",
        m ? malloc_usable_size(m) : 0);
  free(m);
  CHECK(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL)");
}

/* glibc's own allocations: made by the library's malloc (the count of
 * allocated bytes grows) and freed by its free (it comes back). */
static void glibc_blocks(void) {
  size_t base = allocated_bytes();
  char *d = strdup("a string glibc copies with malloc");
  CHECK(allocated_bytes() > base, "strdup did not allocate through the library");
  free(d);
  CHECK(allocated_bytes() == base, "strdup's block did not come back");

  char *buf = NULL;
  size_t len = 0;
  FILE *f = fmemopen("line one\nline two\n", 18, "r");
  CHECK(getline(&buf, &len, f) == 9, "getline");
  fclose(f);
  free(buf);

  char *ms = NULL;
  size_t msz = 0;
  FILE *w = open_memstream(&ms, &msz);
  fprintf(w, "%0*d", 5000, 7);
  fclose(w);
  CHECK(msz == 5000 && ms[4999] == '7', "open_memstream");
  free(ms);

  int *arr = reallocarray(NULL, 1000, sizeof(int));
  CHECK(arr != NULL, "reallocarray");
  arr = reallocarray(arr, 100000, sizeof(int));
  CHECK(arr != NULL, "reallocarray grows");
  free(arr);
  CHECK(allocated_bytes() == base, "glibc's blocks: allocated %zu -> %zu", base,
        allocated_bytes());
}

static void *free_in_thread(void *p) {
  free(p);
  return NULL;
}

static void cold_across_threads(void) {
  /* A first cold block creates the arena, a first thread glibc's own
   * per-thread blocks: both stay, outside what is measured. */
  free(_Znwm12__hot_cold_t(64, 1));
  pthread_t t;
  pthread_create(&t, NULL, free_in_thread, NULL);
  pthread_join(t, NULL);
  size_t base = allocated_bytes();
  void *p = _Znwm12__hot_cold_t(3000, 1);
  CHECK(memprof_hotcold_is_cold(p), "hint 1 not cold");
  pthread_create(&t, NULL, free_in_thread, p);
  pthread_join(t, NULL);
  CHECK(allocated_bytes() == base, "cold block freed in another thread: %zu -> %zu", base,
        allocated_bytes());
}

/* After fork() the child has the parent's arenas (jemalloc's fork
 * handlers) and its own idle thread to come. */
static void fork_child(void) {
  void *kept = _Znwm12__hot_cold_t(500, 1);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    void *c = _Znwm12__hot_cold_t(700, 1);
    int ok = memprof_hotcold_is_cold(c) && memprof_hotcold_is_cold(kept);
    free(c);
    free(kept);
    free(malloc(100));
    _exit(ok ? 0 : 3);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child's status %d", status);
  free(kept);
}

int main(void) {
  printf("malloc_family:\n");
  contracts();
  glibc_blocks();
  cold_across_threads();
  fork_child();
  printf("malloc_family: %d checks, %d failures\n", checks, fails);
  return fails ? 1 : 0;
}
