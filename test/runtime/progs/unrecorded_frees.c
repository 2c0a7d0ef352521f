/* unrecorded_frees.c - test_rt_safety.py: frees the allocator must
 * ignore (a second free, an interior pointer, the start of a block's slot
 * before the block), calloc's zeroing of a slot used before, realloc's
 * copy up and down the size classes, and the statistics of a known number
 * of calls.  Run sampled at a rate that
 * records none of these blocks (the allocator's fast paths) and exact
 * (its general ones): the output is the same. */
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The malloc, free and realloc call counts malloc_stats() prints on
 * stderr. */
static void stats(unsigned long long *mallocs, unsigned long long *frees,
                  unsigned long long *reallocs) {
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
  const char *r = strstr(buf, "M realloced by ");
  *mallocs = m ? strtoull(strstr(m, "by ") + 3, NULL, 10) : 0;
  *frees = f ? strtoull(f + 11, NULL, 10) : 0;
  *reallocs = r ? strtoull(r + 15, NULL, 10) : 0;
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

static char *resize(void *p, size_t n) {
  sink = p;
  sink = realloc(sink, n);
  return sink;
}

/* 1 if p's first n bytes are pattern's: byte i holds i * 7 + 1. */
static int kept(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (char)(i * 7 + 1))
      return 0;
  return 1;
}

static void fill(char *p, size_t from, size_t to) {
  for (size_t i = from; i < to; i++)
    p[i] = (char)(i * 7 + 1);
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

  /* up and down the classes (into the same one too), then past the
   * fast path's 1 KiB and back */
  static const size_t sizes[] = {16, 24, 64, 1000, 20, 24, 30, 2000, 900, 8};
  p = alloc(sizes[0]);
  fill(p, 0, sizes[0]);
  int ok = 1;
  for (int i = 1; i < 10; i++) {
    size_t was = sizes[i - 1], n = sizes[i];
    p = resize(p, n);
    ok &= kept(p, was < n ? was : n);
    if (n > was)
      fill(p, was, n);
  }
  release(p);
  printf("realloc %d\n", ok);

  unsigned long long m0, f0, r0, m1, f1, r1;
  stats(&m0, &f0, &r0);
  for (int i = 0; i < 1000; i++) {
    p = alloc(24 + (size_t)(i % 200));
    release(p);
    if (i % 100 == 0)
      release(p);
  }
  p = alloc(8);
  for (int i = 0; i < 500; i++)
    p = resize(p, 8 + (size_t)(i % 50) * 8);
  release(p);
  stats(&m1, &f1, &r1);
  printf("calls %llu %llu %llu\n", m1 - m0, f1 - f0, r1 - r0);
  return 0;
}
