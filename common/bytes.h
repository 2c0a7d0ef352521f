/* sym_bytes.h - reading DWARF's encodings from a section's bytes, for the
 * raw readers (sym_lines.c, sym_scan.c).  A read past the end sets `bad`
 * and yields 0; callers check `bad` once after a group of reads.
 */
#ifndef MEMPROF_SYM_BYTES_H
#define MEMPROF_SYM_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct sym_cursor {
  const uint8_t *p, *end;
  int bad;
} sym_cursor;

static inline uint64_t sym_uleb(sym_cursor *c) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (c->p >= c->end || shift > 63) {
      c->bad = 1;
      return 0;
    }
    uint8_t b = *c->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return v;
  }
}

static inline int64_t sym_sleb(sym_cursor *c) {
  uint64_t v = 0;
  unsigned shift = 0;
  uint8_t b;
  do {
    if (c->p >= c->end || shift > 63) {
      c->bad = 1;
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
static inline uint64_t sym_fixed(sym_cursor *c, size_t n) {
  if ((size_t)(c->end - c->p) < n) {
    c->bad = 1;
    return 0;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t)c->p[i] << (8 * i);
  c->p += n;
  return v;
}

static inline void sym_skip(sym_cursor *c, uint64_t n) {
  if ((uint64_t)(c->end - c->p) < n)
    c->bad = 1;
  else
    c->p += n;
}

/* A NUL-terminated string in place; NULL (and bad) without its NUL. */
static inline const char *sym_cstr(sym_cursor *c) {
  const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
  if (!nul) {
    c->bad = 1;
    return NULL;
  }
  const char *s = (const char *)c->p;
  c->p = nul + 1;
  return s;
}

#endif
