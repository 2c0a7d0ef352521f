/* blake3.c - BLAKE3 hash of a whole buffer (blake3.h), written from the
 * BLAKE3 specification: 1 KiB chunks of 64-byte blocks compressed with
 * 7-round ChaCha-like permutations, chunk chaining values merged pairwise
 * into a binary tree, root node finalized with the ROOT flag. */
#include "blake3.h"

#include <string.h>

enum { CHUNK_START = 1, CHUNK_END = 2, PARENT = 4, ROOT = 8 };
#define CHUNK_LEN 1024u
#define BLOCK_LEN 64u

static const uint32_t IV[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372,
                               0xA54FF53A, 0x510E527F, 0x9B05688C,
                               0x1F83D9AB, 0x5BE0CD19};
static const uint8_t PERM[16] = {2, 6, 3, 10, 7, 0, 4, 13,
                                 1, 11, 12, 5, 9, 14, 15, 8};

static uint32_t rotr(uint32_t x, int n) { return x >> n | x << (32 - n); }

static void g(uint32_t *s, int a, int b, int c, int d, uint32_t mx,
              uint32_t my) {
  s[a] += s[b] + mx;
  s[d] = rotr(s[d] ^ s[a], 16);
  s[c] += s[d];
  s[b] = rotr(s[b] ^ s[c], 12);
  s[a] += s[b] + my;
  s[d] = rotr(s[d] ^ s[a], 8);
  s[c] += s[d];
  s[b] = rotr(s[b] ^ s[c], 7);
}

/* The first 8 output words (a chaining value, or the digest's first 32
 * bytes for a ROOT compression). */
static void compress(const uint32_t cv[8], const uint32_t block[16],
                     uint64_t counter, uint32_t len, uint32_t flags,
                     uint32_t out[8]) {
  uint32_t s[16], m[16], t[16];
  memcpy(s, cv, 32);
  memcpy(s + 8, IV, 16);
  s[12] = (uint32_t)counter;
  s[13] = (uint32_t)(counter >> 32);
  s[14] = len;
  s[15] = flags;
  memcpy(m, block, 64);
  for (int r = 0; r < 7; r++) {
    g(s, 0, 4, 8, 12, m[0], m[1]);
    g(s, 1, 5, 9, 13, m[2], m[3]);
    g(s, 2, 6, 10, 14, m[4], m[5]);
    g(s, 3, 7, 11, 15, m[6], m[7]);
    g(s, 0, 5, 10, 15, m[8], m[9]);
    g(s, 1, 6, 11, 12, m[10], m[11]);
    g(s, 2, 7, 8, 13, m[12], m[13]);
    g(s, 3, 4, 9, 14, m[14], m[15]);
    for (int i = 0; i < 16; i++) t[i] = m[PERM[i]];
    memcpy(m, t, 64);
  }
  for (int i = 0; i < 8; i++) out[i] = s[i] ^ s[i + 8];
}

/* A compression not yet done: the last block of a chunk or a parent node,
 * which becomes the root if nothing is merged above it. */
typedef struct pending {
  uint32_t cv[8], block[16];
  uint64_t counter;
  uint32_t len, flags;
} pending;

static void load_block(uint32_t w[16], const unsigned char *p, size_t n) {
  unsigned char b[BLOCK_LEN] = {0};
  memcpy(b, p, n);
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
           (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
}

static pending chunk(const unsigned char *p, size_t n, uint64_t index) {
  pending o = {0};
  memcpy(o.cv, IV, 32);
  size_t blocks = n ? (n + BLOCK_LEN - 1) / BLOCK_LEN : 1;
  for (size_t b = 0; b < blocks; b++) {
    size_t len = b + 1 < blocks ? BLOCK_LEN : n - b * BLOCK_LEN;
    uint32_t flags = (b == 0 ? CHUNK_START : 0);
    load_block(o.block, p + b * BLOCK_LEN, len);
    if (b + 1 == blocks) {
      o.counter = index;
      o.len = (uint32_t)len;
      o.flags = flags | CHUNK_END;
      return o;
    }
    compress(o.cv, o.block, index, BLOCK_LEN, flags, o.cv);
  }
  return o; /* not reached */
}

static void chaining_value(const pending *o, uint32_t out[8]) {
  compress(o->cv, o->block, o->counter, o->len, o->flags, out);
}

static pending parent(const uint32_t left[8], const uint32_t right[8]) {
  pending o = {0};
  memcpy(o.cv, IV, 32);
  memcpy(o.block, left, 32);
  memcpy(o.block + 8, right, 32);
  o.counter = 0;
  o.len = BLOCK_LEN;
  o.flags = PARENT;
  return o;
}

uint64_t mp_blake3_u64(const void *data, size_t len) {
  const unsigned char *p = data;
  uint32_t stack[54][8]; /* one entry per level of a 2^64-byte tree */
  int depth = 0;
  size_t chunks = len ? (len + CHUNK_LEN - 1) / CHUNK_LEN : 1;
  pending last;
  for (size_t c = 0;; c++) {
    size_t n = c + 1 < chunks ? CHUNK_LEN : len - c * CHUNK_LEN;
    last = chunk(p + c * CHUNK_LEN, n, c);
    if (c + 1 == chunks) break;
    uint32_t cv[8];
    chaining_value(&last, cv);
    /* merge completed subtrees: one merge per trailing zero bit */
    for (uint64_t total = c + 1; !(total & 1); total >>= 1) {
      pending pn = parent(stack[--depth], cv);
      chaining_value(&pn, cv);
    }
    memcpy(stack[depth++], cv, 32);
  }
  while (depth > 0) {
    uint32_t right[8];
    chaining_value(&last, right);
    last = parent(stack[--depth], right);
  }
  uint32_t out[8];
  compress(last.cv, last.block, 0, last.len, last.flags | ROOT, out);
  return (uint64_t)out[1] << 32 | out[0];
}
