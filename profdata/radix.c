/* radix.c - building and decoding the memprof v3/v4 call-stack radix array
 * (radix.h).  The builder is LLVM's CallStackRadixTreeBuilder: sort stacks
 * root first (frames by ascending popularity, then frame id), encode them
 * from the last to the first into a backwards array, then reverse it, so
 * popular root frames are stored once and reached without jumps. */
#include "radix.h"

#include <stdlib.h>
#include <string.h>

typedef struct sort_ctx {
  const uint32_t *keys; /* per stack: its frames root first, as big-endian
                           ranks, so memcmp orders them */
  const size_t *off;
  const uint32_t *len;
} sort_ctx;

static sort_ctx g_sort; /* qsort has no context argument in C11 */

static const uint64_t *g_count, *g_key;

static int cmp_frame(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (g_count[a] != g_count[b]) return g_count[a] < g_count[b] ? -1 : 1;
  if (g_key[a] != g_key[b]) return g_key[a] < g_key[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* Frames by ascending popularity, then key, as ranks. */
static uint32_t *frame_ranks(const mp_radix_stack *stacks, size_t n,
                             const uint64_t *count, const uint64_t *key) {
  uint32_t n_frames = 0;
  for (size_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < stacks[i].len; j++)
      if (stacks[i].frames[j] >= n_frames) n_frames = stacks[i].frames[j] + 1;
  uint32_t *by = mp_xmalloc(((size_t)n_frames + 1) * 4);
  uint32_t *rank = mp_xmalloc(((size_t)n_frames + 1) * 4);
  for (uint32_t f = 0; f < n_frames; f++) by[f] = f;
  g_count = count;
  g_key = key;
  qsort(by, n_frames, 4, cmp_frame);
  for (uint32_t i = 0; i < n_frames; i++) rank[by[i]] = i;
  free(by);
  return rank;
}

/* Lexicographic, root first; a proper prefix sorts first. */
static int cmp_stack(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  uint32_t la = g_sort.len[a], lb = g_sort.len[b];
  int c = memcmp(g_sort.keys + g_sort.off[a], g_sort.keys + g_sort.off[b],
                 (size_t)(la < lb ? la : lb) * 4);
  if (c) return c;
  if (la != lb) return la < lb ? -1 : 1;
  return a < b ? -1 : 1;
}

/* The symbol of stack s at root-first depth d: 0 past its end (a proper
 * prefix sorts first), else its frame's rank + 1. */
static inline uint32_t sym_at(uint32_t s, uint32_t d) {
  return d < g_sort.len[s]
             ? __builtin_bswap32(g_sort.keys[g_sort.off[s] + d]) + 1
             : 0;
}

/* MSD radix sort of ord[0..n) on depths >= depth (all share the frames
 * above it): one counting pass per level instead of comparisons that walk
 * the long common roots again and again.  Small groups, and very deep
 * ones, fall back to comparison sorting.  cnt holds n_sym + 1 counters per
 * level below. */
#define MSD_LEVELS 32
#define MSD_MAX_SYMS 65536

/* How many root frames stacks a and b share, given that they share
 * `from`. */
static uint32_t common_from(uint32_t a, uint32_t b, uint32_t from) {
  uint32_t la = g_sort.len[a], lb = g_sort.len[b], m = la < lb ? la : lb;
  const uint32_t *ka = g_sort.keys + g_sort.off[a];
  const uint32_t *kb = g_sort.keys + g_sort.off[b];
  uint32_t i = from;
  while (i < m && ka[i] == kb[i]) i++;
  return i;
}

static void sort_small(uint32_t *ord, uint32_t *lcp, size_t n,
                       uint32_t depth) {
  qsort(ord, n, sizeof *ord, cmp_stack);
  for (size_t i = 1; i < n; i++)
    lcp[i] = common_from(ord[i - 1], ord[i], depth);
}

/* Also fills lcp[i] (1 <= i < n): the root frames ord[i - 1] and ord[i]
 * share, which the encoder needs and the sort learns for free. */
static void msd_sort(uint32_t *ord, uint32_t *lcp, uint32_t *tmp, size_t n,
                     uint32_t depth, uint32_t n_sym, uint32_t *cnt) {
  while (n > 1) {
    if (n < 32 || n < n_sym / 4 || depth >= MSD_LEVELS) {
      sort_small(ord, lcp, n, depth);
      return;
    }
    uint32_t *c = cnt + (size_t)depth * (n_sym + 1);
    memset(c, 0, (n_sym + 1) * sizeof *c);
    for (size_t i = 0; i < n; i++) c[sym_at(ord[i], depth)]++;
    uint32_t sum = 0, biggest = 0;
    for (uint32_t k = 0; k <= n_sym; k++) {
      uint32_t t = c[k];
      if (t > biggest) biggest = t;
      c[k] = sum;
      sum += t;
    }
    if (biggest == n) { /* one common frame: go one level down */
      depth++;
      continue;
    }
    for (size_t i = 0; i < n; i++) tmp[c[sym_at(ord[i], depth)]++] = ord[i];
    memcpy(ord, tmp, n * sizeof *ord);
    /* c[k] is now the end of bucket k; bucket 0 (stacks that end here)
     * holds at most one stack, as stacks are distinct */
    uint32_t start = c[0];
    for (uint32_t k = 1; k <= n_sym; k++) {
      uint32_t end = c[k];
      if (end > start && start > 0) lcp[start] = depth;
      if (end - start > 1)
        msd_sort(ord + start, lcp + start, tmp, end - start, depth + 1, n_sym,
                 cnt);
      start = end;
    }
    return;
  }
}

/* Stacks in the builder's order; *lcp_out[i] is how many root frames the
 * i-th shares with the one before it. */
static uint32_t *sort_stacks(const mp_radix_stack *stacks, size_t n,
                             const uint64_t *count, const uint64_t *key,
                             uint32_t **lcp_out) {
  uint32_t *rank = frame_ranks(stacks, n, count, key);
  size_t total = 0;
  size_t *off = mp_xmalloc((n + 1) * sizeof *off);
  uint32_t *len = mp_xmalloc((n + 1) * sizeof *len);
  for (size_t i = 0; i < n; i++) {
    off[i] = total;
    len[i] = stacks[i].len;
    total += stacks[i].len;
  }
  uint32_t *keys = mp_xmalloc((total + 1) * 4);
  uint32_t n_sym = 0;
  for (size_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < len[i]; j++) {
      uint32_t r = rank[stacks[i].frames[len[i] - 1 - j]];
      if (r + 1 > n_sym) n_sym = r + 1;
      keys[off[i] + j] = __builtin_bswap32(r);
    }
  free(rank);
  uint32_t *order = mp_xmalloc((n + 1) * sizeof *order);
  uint32_t *tmp = mp_xmalloc((n + 1) * sizeof *tmp);
  uint32_t *lcp = mp_xcalloc(n + 1, sizeof *lcp);
  for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
  g_sort = (sort_ctx){keys, off, len};
  if (n_sym <= MSD_MAX_SYMS && n < UINT32_MAX) {
    uint32_t *cnt = mp_xmalloc(MSD_LEVELS * ((size_t)n_sym + 1) * 4);
    msd_sort(order, lcp, tmp, n, 0, n_sym, cnt);
    free(cnt);
  } else {
    sort_small(order, lcp, n, 0);
  }
  *lcp_out = lcp;
  free(tmp);
  free(keys);
  free(off);
  free(len);
  return order;
}

typedef struct vec32 {
  uint32_t *v;
  size_t n, cap;
} vec32;

static void push(vec32 *w, uint32_t x) {
  MP_VEC_RESERVE(w->v, w->cap, w->n + 1);
  w->v[w->n++] = x;
}

/* Append one stack, which shares `common` root frames with the one
 * appended before it, to the backwards array; returns its position
 * there. */
static uint32_t encode_one(vec32 *w, vec32 *idx, const mp_radix_stack *s,
                           uint32_t common) {
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
  uint32_t *lcp;
  uint32_t *order = sort_stacks(stacks, n, count, key, &lcp);

  vec32 w = {0}, idx = {0};
  for (size_t k = n; k-- > 0;)
    pos[order[k]] = encode_one(&w, &idx, &stacks[order[k]],
                               k + 1 < n ? lcp[k + 1] : 0);
  free(lcp);
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
