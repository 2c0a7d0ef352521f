/* bytes.h - the tools' one reader of little-endian values, LEB128 and
 * strings from untrusted bytes (the symbolizer's DWARF readers, the
 * instrumentation name table, timelines).  A read past the end sets `bad`
 * to MP_CURSOR_PAST_END, a LEB128 value over 64 bits to
 * MP_CURSOR_OVERFLOW, and yields 0; callers check `bad` once after a
 * group of reads.
 */
#ifndef MEMPROF_COMMON_BYTES_H
#define MEMPROF_COMMON_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct mp_cursor {
  const uint8_t *p, *end;
  int bad;
} mp_cursor;

enum { MP_CURSOR_PAST_END = 1, MP_CURSOR_OVERFLOW = 2 };

/* An unsigned LEB128 value; its 10th byte must be 0 or 1. */
static inline uint64_t mp_uleb(mp_cursor *c) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (c->p >= c->end) {
      c->bad = MP_CURSOR_PAST_END;
      return 0;
    }
    uint8_t b = *c->p++;
    if (shift == 63 && b > 1) {
      c->bad = MP_CURSOR_OVERFLOW;
      return 0;
    }
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return v;
  }
}

static inline int64_t mp_sleb(mp_cursor *c) {
  uint64_t v = 0;
  unsigned shift = 0;
  uint8_t b;
  do {
    if (c->p >= c->end || shift > 63) {
      c->bad = c->p >= c->end ? MP_CURSOR_PAST_END : MP_CURSOR_OVERFLOW;
      return 0;
    }
    b = *c->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  if (shift < 64 && (b & 0x40))
    v |= ~(uint64_t)0 << shift;
  return (int64_t)v;
}

/* A little-endian value of n <= 8 bytes. */
static inline uint64_t mp_fixed(mp_cursor *c, size_t n) {
  if ((size_t)(c->end - c->p) < n) {
    c->bad = MP_CURSOR_PAST_END;
    return 0;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t)c->p[i] << (8 * i);
  c->p += n;
  return v;
}

static inline void mp_skip(mp_cursor *c, uint64_t n) {
  if ((uint64_t)(c->end - c->p) < n)
    c->bad = MP_CURSOR_PAST_END;
  else
    c->p += n;
}

/* A NUL-terminated string in place; NULL (and bad) without its NUL. */
static inline const char *mp_cstr(mp_cursor *c) {
  const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
  if (!nul) {
    c->bad = MP_CURSOR_PAST_END;
    return NULL;
  }
  const char *s = (const char *)c->p;
  c->p = nul + 1;
  return s;
}

#endif
