/* radix.c - building and decoding the memprof v3/v4 call-stack radix array
 * (radix.h).  The builder is LLVM's CallStackRadixTreeBuilder: sort stacks
 * root first (frames by ascending popularity, then frame id), encode them
 * from the last to the first into a backwards array, then reverse it, so
 * popular root frames are stored once and reached without jumps. */
#include "radix.h"

#include <stdlib.h>
#include <string.h>

typedef struct sort_ctx {
  const mp_radix_stack *stacks;
  const uint64_t *count, *key;
} sort_ctx;

static sort_ctx g_sort; /* qsort has no context argument in C11 */

static int frame_less(uint32_t a, uint32_t b) {
  if (g_sort.count[a] != g_sort.count[b])
    return g_sort.count[a] < g_sort.count[b];
  return g_sort.key[a] < g_sort.key[b];
}

/* Lexicographic, root first; a proper prefix sorts first. */
static int cmp_stack(const void *pa, const void *pb) {
  const mp_radix_stack *a = &g_sort.stacks[*(const uint32_t *)pa];
  const mp_radix_stack *b = &g_sort.stacks[*(const uint32_t *)pb];
  uint32_t i = 0;
  for (; i < a->len && i < b->len; i++) {
    uint32_t fa = a->frames[a->len - 1 - i], fb = b->frames[b->len - 1 - i];
    if (frame_less(fa, fb)) return -1;
    if (frame_less(fb, fa)) return 1;
  }
  if (a->len != b->len) return a->len < b->len ? -1 : 1;
  return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

typedef struct vec32 {
  uint32_t *v;
  size_t n, cap;
} vec32;

static void push(vec32 *w, uint32_t x) {
  MP_VEC_RESERVE(w->v, w->cap, w->n + 1);
  w->v[w->n++] = x;
}

static uint32_t common_root_len(const mp_radix_stack *a,
                                const mp_radix_stack *b) {
  uint32_t i = 0;
  while (i < a->len && i < b->len &&
         a->frames[a->len - 1 - i] == b->frames[b->len - 1 - i])
    i++;
  return i;
}

/* Append one stack to the backwards array; returns its position there. */
static uint32_t encode_one(vec32 *w, vec32 *idx, const mp_radix_stack *s,
                           const mp_radix_stack *prev) {
  uint32_t common = prev ? common_root_len(prev, s) : 0;
  idx->n = common;
  if (common) push(w, idx->v[common - 1] - (uint32_t)w->n);
  for (uint32_t i = common; i < s->len; i++) {
    push(idx, (uint32_t)w->n);
    push(w, s->frames[s->len - 1 - i]);
  }
  push(w, s->len);
  return (uint32_t)w->n - 1;
}

void mp_radix_build(const mp_radix_stack *stacks, size_t n,
                    const uint64_t *count, const uint64_t *key,
                    uint32_t **arr, size_t *n_arr, uint32_t *pos) {
  uint32_t *order = mp_xmalloc((n + 1) * sizeof *order);
  for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
  g_sort = (sort_ctx){stacks, count, key};
  qsort(order, n, sizeof *order, cmp_stack);

  vec32 w = {0}, idx = {0};
  const mp_radix_stack *prev = NULL;
  for (size_t k = n; k-- > 0;) {
    const mp_radix_stack *s = &stacks[order[k]];
    pos[order[k]] = encode_one(&w, &idx, s, prev);
    prev = s;
  }
  for (size_t i = 0; i < w.n / 2; i++) {
    uint32_t t = w.v[i];
    w.v[i] = w.v[w.n - 1 - i];
    w.v[w.n - 1 - i] = t;
  }
  for (size_t i = 0; i < n; i++) pos[i] = (uint32_t)w.n - 1 - pos[i];
  free(idx.v);
  free(order);
  *arr = w.v;
  *n_arr = w.n;
}

static uint32_t rd32(const unsigned char *b, uint64_t i) {
  uint32_t v;
  memcpy(&v, b + 4 * i, 4);
  return v;
}

long mp_radix_decode(const unsigned char *bytes, size_t n, uint64_t at,
                     uint64_t n_frames, uint32_t *out, size_t cap,
                     mp_err *err) {
  if (at >= n)
    return mp_fail(err, "call stack id %llu is outside the radix array "
                   "(%zu elements)", (unsigned long long)at, n);
  uint64_t len = rd32(bytes, at), p = at + 1;
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
    uint32_t e = rd32(bytes, p);
    if ((int32_t)e < 0) {
      uint64_t jump = (uint64_t)(-(int64_t)(int32_t)e);
      if (jump >= n - p)
        return mp_fail(err, "call stack %llu: jump at element %llu leaves "
                       "the radix array", (unsigned long long)at,
                       (unsigned long long)p);
      p += jump;
      e = rd32(bytes, p);
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
