/* unrecorded_frees.c - test_rt_safety.py: frees the allocator must
 * ignore (a second free, an interior pointer, the start of a block's slot
 * before the block), calloc's zeroing of a slot used before, and the
 * statistics of a known number of calls.  Run sampled at a rate that
 * records none of these blocks (the allocator's fast paths) and exact
 * (its general ones): the output is the same. */
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The malloc and free call counts malloc_stats() prints on stderr. */
static void stats(unsigned long long *mallocs, unsigned long long *frees) {
  char path[] = "/tmp/unrecorded_frees.XXXXXX", buf[4096];
  int fd = mkstemp(path), saved = dup(2);
  unlink(path);
  dup2(fd, 2);
  malloc_stats();
  dup2(saved, 2);
  close(saved);
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  close(fd);
  buf[n > 0 ? n : 0] = 0;
  const char *m = strstr(buf, "malloced"), *f = strstr(buf, "M freed by ");
  *mallocs = m ? strtoull(strstr(m, "by ") + 3, NULL, 10) : 0;
  *frees = f ? strtoull(f + 11, NULL, 10) : 0;
}

/* Every pointer passes through sink, so that the compiler can neither
 * elide a malloc/free pair nor fold a comparison of two blocks. */
void *volatile sink;

static char *alloc(size_t n) {
  sink = malloc(n);
  return sink;
}

static void release(void *p) {
  sink = p;
  free(sink);
}

int main(void) {
  char *p = alloc(40);
  release(p);
  release(p);
  char *a = alloc(40), *b = alloc(40);
  printf("double_free %d\n", a != b);

  p = alloc(100);
  memset(p, 1, 100);
  release(p + 16);
  char *q = alloc(100);
  printf("interior %d %d\n", q != p, p[99] == 1);

  p = alloc(257); /* starts 32 bytes into its slot */
  memset(p, 2, 257);
  release(p - 32);
  q = alloc(257);
  printf("slot_start %d %d\n", q != p, p[256] == 2);

  p = alloc(64);
  memset(p, 0xab, 64);
  release(p);
  sink = calloc(1, 64);
  char *z = sink;
  int zero = 1;
  for (int i = 0; i < 64; i++)
    zero &= z[i] == 0;
  printf("calloc %d\n", zero);

  unsigned long long m0, f0, m1, f1;
  stats(&m0, &f0);
  for (int i = 0; i < 1000; i++) {
    p = alloc(24 + (size_t)(i % 200));
    release(p);
    if (i % 100 == 0)
      release(p);
  }
  stats(&m1, &f1);
  printf("calls %llu %llu\n", m1 - m0, f1 - f0);
  return 0;
}
