/* md5.c - MD5 per RFC 1321 (md5.h).
 *
 * GUIDs must equal LLVM's MD5Hash(name) (the low 8 digest bytes read as a
 * little-endian u64), because clang looks records up by the GUID of the IR
 * function name.
 */
#include "md5.h"

#include <string.h>


static const uint32_t K[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
    0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
    0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
    0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
    0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

static const unsigned char S[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

static uint32_t rotl(uint32_t x, unsigned n) {
  return (x << n) | (x >> (32 - n));
}

static uint32_t load_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static void store_le32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

/* One MD5 step; the four rounds below differ in F and the word order.  One
 * loop per round (rather than one loop choosing the round each step) lets
 * the compiler unroll them: names are hashed by the thousand per input. */
#define STEP(F, i, g)                                                       \
  do {                                                                      \
    uint32_t f_ = (F), t_ = d;                                              \
    d = c;                                                                  \
    c = b;                                                                  \
    b = b + rotl(a + f_ + K[i] + w[g], S[i]);                               \
    a = t_;                                                                 \
  } while (0)

static void md5_block(mp_md5 *m, const unsigned char *blk) {
  uint32_t w[16];
  for (int i = 0; i < 16; i++) w[i] = load_le32(blk + 4 * i);
  uint32_t a = m->a, b = m->b, c = m->c, d = m->d;
  for (int i = 0; i < 16; i++) STEP((b & c) | (~b & d), i, i);
  for (int i = 16; i < 32; i++) STEP((d & b) | (~d & c), i, (5 * i + 1) & 15);
  for (int i = 32; i < 48; i++) STEP(b ^ c ^ d, i, (3 * i + 5) & 15);
  for (int i = 48; i < 64; i++) STEP(c ^ (b | ~d), i, (7 * i) & 15);
  m->a += a;
  m->b += b;
  m->c += c;
  m->d += d;
}

#undef STEP

void mp_md5_init(mp_md5 *m) {
  m->a = 0x67452301;
  m->b = 0xefcdab89;
  m->c = 0x98badcfe;
  m->d = 0x10325476;
  m->len = 0;
}

void mp_md5_update(mp_md5 *m, const void *data, size_t n) {
  const unsigned char *p = data;
  size_t used = (size_t)(m->len & 63);
  m->len += n;
  if (used) {
    size_t take = 64 - used < n ? 64 - used : n;
    memcpy(m->block + used, p, take);
    p += take;
    n -= take;
    if (used + take < 64) return;
    md5_block(m, m->block);
  }
  for (; n >= 64; p += 64, n -= 64) md5_block(m, p);
  memcpy(m->block, p, n);
}

void mp_md5_final(mp_md5 *m, unsigned char digest[16]) {
  uint64_t bits = m->len * 8;
  unsigned char pad[72] = {0x80};
  size_t used = (size_t)(m->len & 63);
  size_t npad = used < 56 ? 56 - used : 120 - used;
  mp_md5_update(m, pad, npad);
  unsigned char lenb[8];
  for (int i = 0; i < 8; i++) lenb[i] = (unsigned char)(bits >> (8 * i));
  mp_md5_update(m, lenb, 8);
  store_le32(digest, m->a);
  store_le32(digest + 4, m->b);
  store_le32(digest + 8, m->c);
  store_le32(digest + 12, m->d);
}

void mp_md5_digest(const void *data, size_t n, unsigned char digest[16]) {
  mp_md5 m;
  mp_md5_init(&m);
  mp_md5_update(&m, data, n);
  mp_md5_final(&m, digest);
}
