/* hostile.c - programs that push the runtime where ordinary ones do not:
 * one scenario per argv[1] (see test_hostile_programs.py for what each
 * must produce). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOI __attribute__((noinline))

NOI void *site_thr(size_t n) { return malloc(n); }
NOI void *site_ok(size_t n) { return malloc(n); }
NOI void *site_deep(size_t n) { return malloc(n); }
NOI void *site_many(size_t n) { return malloc(n); }
NOI void *site_spawn(size_t n) { return malloc(n); }

extern char **environ;

static void *one_block(void *arg) {
  (void)arg;
  void *p = site_thr(16);
  memset(p, 1, 16);
  free(p);
  return NULL;
}

/* 1000 threads, 50 at a time: thread records must be recycled. */
static int run_threads1000(void) {
  for (int round = 0; round < 20; round++) {
    pthread_t t[50];
    for (int i = 0; i < 50; i++)
      if (pthread_create(&t[i], NULL, one_block, NULL) != 0) return 3;
    for (int i = 0; i < 50; i++) pthread_join(t[i], NULL);
  }
  return 0;
}

/* Sizes no allocator can give must fail cleanly (with
 * allocator_may_return_null=1), and the program goes on profiling. */
static int run_bad_sizes(void) {
  int bad = 0;
  errno = 0;
  if (calloc(SIZE_MAX / 2 + 1, 2) != NULL || errno != ENOMEM) bad |= 1;
  errno = 0;
  if (malloc(SIZE_MAX) != NULL || errno != ENOMEM) bad |= 2;
  errno = 0;
  if (realloc(NULL, SIZE_MAX - 8) != NULL || errno != ENOMEM) bad |= 4;
  void *p = NULL;
  if (posix_memalign(&p, 3, 16) != EINVAL) bad |= 8;
  if (posix_memalign(&p, 1ULL << 40, 1ULL << 41) != ENOMEM) bad |= 16;
  errno = 0;
  if (aligned_alloc(64, SIZE_MAX - 63) != NULL) bad |= 32;
  void *q = site_ok(24);
  q = realloc(q, 0); /* frees */
  free(q);
  free(NULL);
  for (int i = 0; i < 4; i++) {
    void *r = site_ok(24);
    memset(r, 0, 24);
    free(r);
  }
  printf("bad=%d\n", bad);
  return bad ? 4 : 0;
}

static NOI void *recurse(int depth) {
  if (depth == 0) return site_deep(32);
  void *p = recurse(depth - 1);
  __asm__ volatile("" ::: "memory"); /* no tail call */
  return p;
}

/* Stacks deeper than malloc_context_size (30) are cut, not overrun. */
static int run_deep(void) {
  for (int i = 0; i < 3; i++) free(recurse(200));
  return 0;
}

/* 64 x 64 = 4096 distinct allocation contexts through two levels of
 * distinct call sites: the MIB table and stack depot must grow. */
#define L2(i)                                                                  \
  static NOI void lvl2_##i(int j) {                                            \
    switch (j & 7) {                                                           \
    case 0: free(site_many(8)); break;                                         \
    case 1: free(site_many(8)); break;                                         \
    case 2: free(site_many(8)); break;                                         \
    case 3: free(site_many(8)); break;                                         \
    case 4: free(site_many(8)); break;                                         \
    case 5: free(site_many(8)); break;                                         \
    case 6: free(site_many(8)); break;                                         \
    default: free(site_many(8)); break;                                        \
    }                                                                          \
  }
#define L8(a) L2(a##0) L2(a##1) L2(a##2) L2(a##3) L2(a##4) L2(a##5) L2(a##6) L2(a##7)
L8(0) L8(1) L8(2) L8(3) L8(4) L8(5) L8(6) L8(7)
#define R2(i) lvl2_##i,
#define R8(a) R2(a##0) R2(a##1) R2(a##2) R2(a##3) R2(a##4) R2(a##5) R2(a##6) R2(a##7)
static void (*const lvl2[64])(int) = {R8(0) R8(1) R8(2) R8(3) R8(4) R8(5) R8(6) R8(7)};

static int run_many(void) {
  for (int rep = 0; rep < 2; rep++)
    for (int i = 0; i < 64; i++)
      for (int j = 0; j < 8; j++) lvl2[i](j);
  return 0;
}

/* posix_spawn and fork+exec while threads allocate: only this process
 * writes a profile. */
static volatile int stop;
static void *spin(void *arg) {
  (void)arg;
  while (!stop) free(site_thr(16));
  return NULL;
}

static int run_spawn(void) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, spin, NULL);
  for (int i = 0; i < 5; i++) {
    pid_t pid;
    char *argv[] = {"/bin/true", NULL};
    if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0) return 5;
    waitpid(pid, NULL, 0);
    pid = fork();
    if (pid == 0) {
      execve("/bin/true", argv, environ);
      _exit(7);
    }
    waitpid(pid, NULL, 0);
    pid = vfork();
    if (pid == 0) _exit(0);
    waitpid(pid, NULL, 0);
    free(site_spawn(48));
  }
  stop = 1;
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *m = argv[1];
  if (!strcmp(m, "threads1000")) return run_threads1000();
  if (!strcmp(m, "bad_sizes")) return run_bad_sizes();
  if (!strcmp(m, "deep")) return run_deep();
  if (!strcmp(m, "many")) return run_many();
  if (!strcmp(m, "spawn")) return run_spawn();
  return 2;
}
