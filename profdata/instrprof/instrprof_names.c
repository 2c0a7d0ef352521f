/* instrprof_names.c - LLVM's name-string encoding (instrprof.h): names
 * joined by \x01 in chunks of ULEB uncompressed length, ULEB compressed
 * length (0: stored plain), the bytes.  Raw instrumentation profiles hold
 * their function names so; the data-access profile of an indexed memprof
 * v4 section its symbol and file names.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/bytes.h"
#include "instrprof.h"

static void put_uleb(mp_buf *out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    mp_buf_u8(out, (uint8_t)(b | (v ? 0x80 : 0)));
  } while (v);
}

void mp_names_encode(const char *const *names, const size_t *lens, size_t n,
                     int compress, mp_buf *out) {
  mp_buf joined = {0};
  for (size_t i = 0; i < n; i++) {
    if (i) mp_buf_u8(&joined, 1);
    mp_buf_put(&joined, names[i], lens[i]);
  }
  put_uleb(out, joined.len);
  uLongf clen = compressBound((uLong)joined.len);
  unsigned char *c = compress ? mp_xmalloc(clen ? clen : 1) : NULL;
  if (c && compress2(c, &clen, joined.data ? joined.data : (const Bytef *)"",
                     (uLong)joined.len, Z_BEST_COMPRESSION) == Z_OK) {
    put_uleb(out, clen);
    mp_buf_put(out, c, clen);
  } else {
    put_uleb(out, 0);
    if (joined.len) mp_buf_put(out, joined.data, joined.len);
  }
  free(c);
  mp_buf_free(&joined);
}

/* An unsigned LEB128 value at d[*pos] before `end`, moving *pos past it. */
static int uleb(const unsigned char *d, size_t end, size_t *pos, uint64_t *v) {
  mp_cursor c = {d + *pos, d + end, 0};
  *v = mp_uleb(&c);
  *pos = (size_t)(c.p - d);
  return c.bad ? -1 : 0;
}

int mp_names_decode(const unsigned char *d, size_t pos, size_t end,
                    const char *what, mp_names_fn fn, void *ctx,
                    mp_err *err) {
  while (pos < end) {
    size_t at = pos;
    uint64_t usize, csize;
    if (uleb(d, end, &pos, &usize) || uleb(d, end, &pos, &csize))
      return mp_fail(err, "%s at offset 0x%zx: truncated length", what, at);
    uint64_t stored = csize ? csize : usize;
    if (stored > end - pos)
      return mp_fail(err, "%s at offset 0x%zx: %llu bytes of names do not "
                     "fit in the %zu left", what, at,
                     (unsigned long long)stored, end - pos);
    /* zlib expands at most about 1032:1: a larger claim is damage, and
     * would only cost memory. */
    if (csize && usize / 1032 > csize)
      return mp_fail(err, "%s at offset 0x%zx: %llu compressed bytes cannot "
                     "hold %llu", what, at, (unsigned long long)csize,
                     (unsigned long long)usize);
    if (csize) {
      unsigned char *buf = mp_xmalloc(usize ? usize : 1);
      uLongf got = (uLongf)usize;
      if (uncompress(buf, &got, d + pos, (uLong)csize) != Z_OK ||
          got != usize) {
        free(buf);
        return mp_fail(err, "%s at offset 0x%zx: zlib data does not "
                       "decompress to %llu bytes", what, at,
                       (unsigned long long)usize);
      }
      fn(ctx, (const char *)buf, (size_t)usize);
      free(buf);
    } else {
      fn(ctx, (const char *)d + pos, (size_t)usize);
    }
    pos += stored;
    while (pos < end && d[pos] == 0) pos++;
  }
  return 0;
}
