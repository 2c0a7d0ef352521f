/* error.c - error messages and allocation helpers of the tool's libraries
 * (error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mp_fail(mp_err *e, const char *fmt, ...) {
  if (!e) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return -1;
}

/* Long messages lose their tail, never the prefix. */
void mp_err_prefix(mp_err *e, const char *what) {
  size_t cap = sizeof e->msg - 1;
  size_t w = strlen(what);
  if (w > cap - 2) w = cap - 2;
  size_t m = strlen(e->msg);
  if (m > cap - w - 2) m = cap - w - 2;
  memmove(e->msg + w + 2, e->msg, m);
  memcpy(e->msg, what, w);
  e->msg[w] = ':';
  e->msg[w + 1] = ' ';
  e->msg[w + 2 + m] = 0;
}

static mp_oom_fn oom_handler;

void mp_set_oom_handler(mp_oom_fn fn) { oom_handler = fn; }

static void oom(size_t n) {
  if (oom_handler) oom_handler(n);
  fprintf(stderr, "out of memory (allocating %zu bytes)\n", n);
  abort();
}

void *mp_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) oom(n);
  return p;
}

void *mp_xaligned_alloc(size_t align, size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, align, n ? n : 1)) oom(n);
  return p;
}

void *mp_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) oom(n * size);
  return p;
}

void *mp_xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) oom(n);
  return p;
}

char *mp_xstrndup(const char *s, size_t n) {
  char *d = mp_xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}
