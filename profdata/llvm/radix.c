/* radix.c - building and decoding the memprof v3/v4 call-stack radix array
 * (radix.h).  The builder is LLVM's CallStackRadixTreeBuilder: sort stacks
 * root first (radix_sort.c), encode them from the last to the first into a
 * backwards array, then reverse it, so popular root frames are stored once
 * and reached without jumps. */
#include "radix.h"

#include <stdlib.h>
#include <string.h>

#include "radix_sort.h"

/* The stacks are far apart and outgrow the CPU caches once a profile has
 * some ten thousand of them: the encoder fetches the frames it will read
 * this many stacks ahead. */
#define AHEAD 8

/* Brings in stack t's frame at root-first depth d. */
static inline void prefetch_row(const mp_radix_stack *t, uint32_t d) {
  if (d < t->len) __builtin_prefetch(t->frames + (t->len - 1 - d));
}

/* The backwards array being built, as little-endian u32s at any
 * alignment (it may be the writer's output buffer).  Sized for the worst
 * case up front, so appending needs no checks. */
typedef struct backwards {
  unsigned char *v;
  size_t n;
  uint32_t *at; /* per root-first depth: where that frame of the stacks
                   appended so far went */
} backwards;

static inline void put32(unsigned char *v, size_t i, uint32_t x) {
  memcpy(v + 4 * i, &x, 4);
}

static inline uint32_t get32(const unsigned char *v, size_t i) {
  uint32_t x;
  memcpy(&x, v + 4 * i, 4);
  return x;
}

/* Append stack s, which shares `common` root frames with the one
 * appended before it, to the backwards array; returns its position
 * there. */
static uint32_t encode_one(backwards *w, const sorted *so, uint32_t s,
                           uint32_t common) {
  const uint32_t *fr = so->st[s].frames; /* leaf first */
  uint32_t len = so->st[s].len;
  unsigned char *v = w->v;
  uint32_t *at = w->at;
  size_t n = w->n;
  if (common) {
    put32(v, n, at[common - 1] - (uint32_t)n);
    n++;
  }
  for (uint32_t i = common; i < len; i++) {
    at[i] = (uint32_t)n;
    uint32_t e = fr[len - 1 - i];
    put32(v, n++, so->map ? so->map[e] : e);
  }
  put32(v, n++, len);
  w->n = n;
  return (uint32_t)n - 1;
}

void mp_radix_build(const mp_radix_stack *stacks, size_t n,
                    const uint64_t *count, const uint64_t *key,
                    uint32_t **arr, size_t *n_arr, uint32_t *pos) {
  mp_radix_map m = {NULL, 0, 0};
  for (size_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < stacks[i].len; j++)
      if (stacks[i].frames[j] >= m.n_frames)
        m.n_frames = stacks[i].frames[j] + 1;
  *arr = mp_xmalloc(mp_radix_max_len(stacks, n) * 4);
  *n_arr = mp_radix_build_into(stacks, n, &m, count, key,
                               (unsigned char *)*arr, pos);
}

/* Every frame, plus a length and a jump per stack. */
size_t mp_radix_max_len(const mp_radix_stack *stacks, size_t n) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += stacks[i].len;
  return total + 2 * n + 1;
}

size_t mp_radix_build_into(const mp_radix_stack *stacks, size_t n,
                           const mp_radix_map *m, const uint64_t *count,
                           const uint64_t *key, unsigned char *out,
                           uint32_t *pos) {
  sorted so;
  mp_radix_sort(stacks, n, m, count, key, &so);
  size_t longest = 0;
  for (size_t i = 0; i < n; i++)
    if (stacks[i].len > longest) longest = stacks[i].len;
  backwards w = {out, 0, mp_xmalloc((longest + 1) * 4)};
  for (size_t k = n; k-- > 0;) {
    if (k >= AHEAD) {
      const mp_radix_stack *a = &so.st[so.order[k - AHEAD]];
      prefetch_row(a, so.lcp[k - AHEAD + 1]);
      prefetch_row(a, a->len ? a->len - 1 : 0);
    }
    pos[so.order[k]] = encode_one(&w, &so, so.order[k],
                                  k + 1 < n ? so.lcp[k + 1] : 0);
  }
  for (size_t i = 0; i < w.n / 2; i++) {
    uint32_t t = get32(w.v, i);
    put32(w.v, i, get32(w.v, w.n - 1 - i));
    put32(w.v, w.n - 1 - i, t);
  }
  for (size_t i = 0; i < n; i++) pos[i] = (uint32_t)w.n - 1 - pos[i];
  free(w.at);
  free(so.order);
  free(so.lcp);
  return w.n;
}

long mp_radix_decode(const unsigned char *bytes, size_t n, uint64_t at,
                     uint64_t n_frames, uint32_t *out, size_t cap,
                     mp_err *err) {
  if (at >= n)
    return mp_fail(err, "call stack id %llu is outside the radix array "
                   "(%zu elements)", (unsigned long long)at, n);
  uint64_t len = get32(bytes, at), p = at + 1;
  if (len > n - p)
    return mp_fail(err, "call stack %llu: length %llu exceeds the radix "
                   "array", (unsigned long long)at, (unsigned long long)len);
  if (len > cap)
    return mp_fail(err, "call stack %llu: length %llu is too long",
                   (unsigned long long)at, (unsigned long long)len);
  for (uint64_t k = 0; k < len; k++, p++) {
    if (p >= n)
      return mp_fail(err, "call stack %llu runs past the radix array",
                     (unsigned long long)at);
    uint32_t e = get32(bytes, p);
    if ((int32_t)e < 0) {
      uint64_t jump = (uint64_t)(-(int64_t)(int32_t)e);
      if (jump >= n - p)
        return mp_fail(err, "call stack %llu: jump at element %llu leaves "
                       "the radix array", (unsigned long long)at,
                       (unsigned long long)p);
      p += jump;
      e = get32(bytes, p);
      if ((int32_t)e < 0)
        return mp_fail(err, "call stack %llu: jump at element %llu lands on "
                       "another jump", (unsigned long long)at,
                       (unsigned long long)(p - jump));
    }
    if (e >= n_frames)
      return mp_fail(err, "call stack %llu: frame id %u at element %llu is "
                     "not in the frame array (%llu frames)",
                     (unsigned long long)at, e, (unsigned long long)p,
                     (unsigned long long)n_frames);
    out[k] = e;
  }
  return (long)len;
}
