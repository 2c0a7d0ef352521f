/* md5.h - MD5 (RFC 1321), used for LLVM's function GUIDs (guid.h) and
 * nothing security-related.
 */
#ifndef PROFDATA_MD5_H
#define PROFDATA_MD5_H

#include <stddef.h>
#include <stdint.h>

typedef struct mp_md5 {
  uint32_t a, b, c, d;
  uint64_t len; /* bytes fed so far */
  unsigned char block[64];
} mp_md5;

void mp_md5_init(mp_md5 *m);
void mp_md5_update(mp_md5 *m, const void *data, size_t n);
void mp_md5_final(mp_md5 *m, unsigned char digest[16]);

/* One-shot digest of `n` bytes. */
void mp_md5_digest(const void *data, size_t n, unsigned char digest[16]);

#endif
