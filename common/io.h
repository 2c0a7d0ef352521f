/* io.h - whole-file input and crash-safe output for profdata.
 *
 * Inputs are read into the heap, or mapped read-only when large (a 1 GiB
 * profile then costs address space, not memory: io.c says where the line
 * is).  Outputs are built in an mp_buf and written to a temporary file in
 * the destination folder, then renamed over the destination, so a failed
 * run never leaves a half-written output.
 */
#ifndef PROFDATA_IO_H
#define PROFDATA_IO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "error.h"

typedef struct mp_file {
  const unsigned char *data;
  size_t size;
  void *map;   /* for munmap; NULL when data is not mapped */
  void *owned; /* data's heap buffer, or NULL */
} mp_file;

int mp_file_open(mp_file *f, const char *path, mp_err *err);
/* path followed by suffix ("<raw profile>.timeline"), malloc'd: the file
 * the runtime writes beside a profile. */
char *mp_path_beside(const char *path, const char *suffix);
void mp_file_close(mp_file *f);

/* Little-endian loads at any alignment, for the readers. */
static inline uint16_t mp_rd16(const unsigned char *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
static inline uint32_t mp_rd32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t mp_rd64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* A growable byte buffer for serializers. */
typedef struct mp_buf {
  unsigned char *data;
  size_t len, cap;
} mp_buf;

void mp_buf_reserve(mp_buf *b, size_t extra);
void mp_buf_free(mp_buf *b);

static inline void mp_buf_put(mp_buf *b, const void *p, size_t n) {
  mp_buf_reserve(b, n);
  memcpy(b->data + b->len, p, n);
  b->len += n;
}
static inline void mp_buf_u8(mp_buf *b, uint8_t v) { mp_buf_put(b, &v, 1); }
static inline void mp_buf_u16(mp_buf *b, uint16_t v) { mp_buf_put(b, &v, 2); }
static inline void mp_buf_u32(mp_buf *b, uint32_t v) { mp_buf_put(b, &v, 4); }
static inline void mp_buf_u64(mp_buf *b, uint64_t v) { mp_buf_put(b, &v, 8); }
/* Overwrite a u64 already in the buffer (for offsets patched later). */
static inline void mp_buf_set_u64(mp_buf *b, size_t at, uint64_t v) {
  memcpy(b->data + at, &v, 8);
}
void mp_buf_printf(mp_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Write `len` bytes to `path` through a temporary file and rename.
 * "-" means stdout; an existing device or FIFO is written in place. */
int mp_write_atomic(const char *path, const void *data, size_t len,
                    mp_err *err);

#endif
