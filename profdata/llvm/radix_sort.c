/* radix_sort.c - the order the radix builder (radix.c) encodes stacks in,
 * as LLVM's CallStackRadixTreeBuilder sorts them: frames ranked by
 * ascending popularity, then by key; stacks compared root first by those
 * ranks, a proper prefix first.  An MSD radix sort does it with one
 * counting pass per level instead of comparisons that walk the long common
 * roots again and again, on two threads once a profile is large, and
 * gives the common root length of each pair of neighbours for the
 * encoder. */
#define _GNU_SOURCE /* qsort_r */
#include "radix_sort.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/helper.h"

/* The stacks are read where the caller keeps them, through `rank`
 * (element -> frame rank), rather than copied into rows of ranks: the
 * copy would be as large as all stacks together. */
typedef struct sort_ctx {
  const mp_radix_stack *st;
  const uint32_t *rank;
} sort_ctx;

typedef struct frame_order {
  const uint64_t *count, *key;
} frame_order;

static int cmp_frame(const void *pa, const void *pb, void *ctx) {
  const frame_order *o = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (o->count[a] != o->count[b]) return o->count[a] < o->count[b] ? -1 : 1;
  if (o->key[a] != o->key[b]) return o->key[a] < o->key[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* Frames by ascending popularity, then key, as ranks (frame -> rank). */
static uint32_t *frame_ranks(uint32_t n_frames, const uint64_t *count,
                             const uint64_t *key) {
  uint32_t *by = mp_xmalloc(((size_t)n_frames + 1) * 4);
  uint32_t *rank = mp_xmalloc(((size_t)n_frames + 1) * 4);
  for (uint32_t f = 0; f < n_frames; f++) by[f] = f;
  frame_order o = {count, key};
  qsort_r(by, n_frames, 4, cmp_frame, &o);
  for (uint32_t i = 0; i < n_frames; i++) rank[by[i]] = i;
  free(by);
  return rank;
}

/* Element id -> rank: the caller's map composed with the ranks, so that
 * the sort reads each element with one lookup. */
static uint32_t *element_ranks(uint32_t *rank, const uint32_t *map,
                               uint32_t n_ids) {
  if (!map) return rank;
  uint32_t *r = mp_xmalloc(((size_t)n_ids + 1) * 4);
  for (uint32_t i = 0; i < n_ids; i++) r[i] = rank[map[i]];
  return r;
}

/* The rank of stack s's frame at root-first depth d < its length. */
static inline uint32_t rank_at(const sort_ctx *c, uint32_t s, uint32_t d) {
  const mp_radix_stack *t = &c->st[s];
  return c->rank[t->frames[t->len - 1 - d]];
}

/* Lexicographic by rank, root first; a proper prefix sorts first. */
static int cmp_stack(const void *pa, const void *pb, void *ctx) {
  const sort_ctx *c = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  uint32_t la = c->st[a].len, lb = c->st[b].len;
  for (uint32_t d = 0, m = la < lb ? la : lb; d < m; d++) {
    uint32_t ra = rank_at(c, a, d), rb = rank_at(c, b, d);
    if (ra != rb) return ra < rb ? -1 : 1;
  }
  if (la != lb) return la < lb ? -1 : 1;
  return a < b ? -1 : 1;
}

/* The symbol of stack s at root-first depth d: 0 past its end (a proper
 * prefix sorts first), else its frame's rank + 1. */
static inline uint32_t sym_at(const sort_ctx *c, uint32_t s, uint32_t d) {
  return d < c->st[s].len ? rank_at(c, s, d) + 1 : 0;
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
static uint32_t common_from(const sort_ctx *c, uint32_t a, uint32_t b,
                            uint32_t from) {
  uint32_t la = c->st[a].len, lb = c->st[b].len;
  uint32_t m = la < lb ? la : lb, i = from;
  while (i < m && rank_at(c, a, i) == rank_at(c, b, i)) i++;
  return i;
}

/* The rows are far apart and the arrays outgrow the CPU caches once a
 * profile has some ten thousand stacks: fetch a row this many stacks
 * ahead of its use. */
#define AHEAD 8

static inline void prefetch_row(const sort_ctx *c, uint32_t s, uint32_t d) {
  const mp_radix_stack *t = &c->st[s];
  if (d < t->len) __builtin_prefetch(t->frames + (t->len - 1 - d));
}

/* sym[i] = sym_at(ord[i], depth): one pass over the rows, so that counting
 * and scattering need not touch them again. */
static void gather(const sort_ctx *c, const uint32_t *ord, uint32_t *sym,
                   size_t n, uint32_t depth) {
  for (size_t i = 0; i < n; i++) {
    if (i + AHEAD < n) prefetch_row(c, ord[i + AHEAD], depth);
    sym[i] = sym_at(c, ord[i], depth);
  }
}

static void sort_small(const sort_ctx *c, uint32_t *ord, uint32_t *lcp,
                       size_t n, uint32_t depth) {
  qsort_r(ord, n, sizeof *ord, cmp_stack, (void *)c);
  for (size_t i = 1; i < n; i++)
    lcp[i] = common_from(c, ord[i - 1], ord[i], depth);
}

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

static int all_same(const uint32_t *sym, size_t n) {
  uint32_t diff = 0;
  for (size_t i = 1; i < n; i++) diff |= sym[i] ^ sym[0];
  return diff == 0;
}

static void insertion_sort(uint64_t *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    uint64_t x = v[i];
    size_t j = i;
    for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
    v[j] = x;
  }
}

/* Quicksort of distinct values without qsort's call per comparison (this
 * sorts thousands of small groups per profile); past `budget` levels it
 * leaves the rest to qsort, so no input makes it quadratic. */
static void sort_pairs_depth(uint64_t *v, size_t n, int budget) {
  while (n > 24) {
    if (budget-- == 0) {
      qsort(v, n, sizeof *v, cmp_u64);
      return;
    }
    uint64_t a = v[0], b = v[n / 2], c = v[n - 1];
    uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a)
                           : (a < c ? a : b < c ? c : b);
    size_t i = 0, j = n - 1;
    for (;;) { /* Hoare partition: v[0..i) <= pivot <= v(j..n) */
      while (v[i] < pivot) i++;
      while (v[j] > pivot) j--;
      if (i >= j) break;
      uint64_t t = v[i];
      v[i++] = v[j];
      v[j--] = t;
    }
    /* recurse into the smaller side, loop on the larger */
    if (j + 1 < n - j - 1) {
      sort_pairs_depth(v, j + 1, budget);
      v += j + 1;
      n -= j + 1;
    } else {
      sort_pairs_depth(v + j + 1, n - j - 1, budget);
      n = j + 1;
    }
  }
  insertion_sort(v, n);
}

static void sort_pairs(uint64_t *v, size_t n) { sort_pairs_depth(v, n, 48); }

/* The scratch of one sorting thread: tmp, sym and pair hold a slot per
 * stack of the group (a subgroup uses its own range: msd_at); cnt holds
 * n_sym + 1 counters per level below and is this thread's own. */
typedef struct msd_ctx {
  const sort_ctx *c;
  uint32_t *tmp, *sym;
  uint64_t *pair;
  uint32_t n_sym;
  uint32_t *cnt;
} msd_ctx;

/* The scratch of the subgroup that starts `at` stacks into this one. */
static msd_ctx msd_at(const msd_ctx *x, size_t at) {
  return (msd_ctx){x->c, x->tmp + at, x->sym + at, x->pair + at, x->n_sym, x->cnt};
}

static void msd_sort(uint32_t *ord, uint32_t *lcp, const msd_ctx *x, size_t n,
                     uint32_t depth);

/* One level of a group too small for a counting pass over every symbol:
 * sort (symbol, position) pairs instead.  Returns 0 when all share the
 * symbol (the caller goes one level down).  A child group's pairs live in
 * its own part of `pair`, as this level still walks the rest. */
static int split_by_pairs(uint32_t *ord, uint32_t *lcp, const msd_ctx *x,
                          size_t n, uint32_t depth) {
  uint64_t *pair = x->pair;
  for (size_t i = 0; i < n; i++) pair[i] = (uint64_t)x->sym[i] << 32 | i;
  sort_pairs(pair, n);
  if (pair[0] >> 32 == pair[n - 1] >> 32) return 0;
  for (size_t i = 0; i < n; i++) x->tmp[i] = ord[(uint32_t)pair[i]];
  memcpy(ord, x->tmp, n * sizeof *ord);
  size_t start = 0;
  for (size_t i = 1; i <= n; i++) {
    if (i < n && pair[i] >> 32 == pair[start] >> 32) continue;
    if (start > 0) lcp[start] = depth;
    if (i - start > 1) {
      msd_ctx sub = msd_at(x, start);
      msd_sort(ord + start, lcp + start, &sub, i - start, depth + 1);
    }
    start = i;
  }
  return 1;
}

/* Buckets k0..k1 of a counted level (ends[k]: end of bucket k, in ord),
 * each sorted one level down.  A bucket of more than one stack shares
 * `depth` root frames with its predecessor. */
static void sort_buckets(uint32_t *ord, uint32_t *lcp, const msd_ctx *x,
                         const uint32_t *ends, uint32_t k0, uint32_t k1,
                         uint32_t depth) {
  uint32_t start = ends[k0 - 1];
  for (uint32_t k = k0; k <= k1; k++) {
    uint32_t end = ends[k];
    if (end > start && start > 0) lcp[start] = depth;
    if (end - start > 1) {
      msd_ctx sub = msd_at(x, start);
      msd_sort(ord + start, lcp + start, &sub, end - start, depth + 1);
    }
    start = end;
  }
}

/* One level of the sort: either every stack shares its symbol (returns 1:
 * go one level down), or the group is split into buckets, whose ends are
 * in the returned counters (returns 0), or it was small and is done
 * (returns -1). */
static int msd_level(uint32_t *ord, uint32_t *lcp, const msd_ctx *x, size_t n,
                     uint32_t depth, uint32_t **ends) {
  uint32_t *sym = x->sym, n_sym = x->n_sym;
  gather(x->c, ord, sym, n, depth);
  /* Deep stacks share long runs of root frames: a level where every
   * stack has the same frame needs neither counting nor sorting. */
  if (all_same(sym, n)) return sym[0] ? 1 : -1; /* all ended: equal stacks,
                                                   kept in order */
  if (n < 32 || n < n_sym / 4 || depth >= MSD_LEVELS)
    return split_by_pairs(ord, lcp, x, n, depth) ? -1 : 1;
  uint32_t *c = x->cnt + (size_t)depth * (n_sym + 1);
  memset(c, 0, (n_sym + 1) * sizeof *c);
  for (size_t i = 0; i < n; i++) c[sym[i]]++;
  uint32_t sum = 0;
  for (uint32_t k = 0; k <= n_sym; k++) {
    uint32_t t = c[k];
    c[k] = sum;
    sum += t;
  }
  for (size_t i = 0; i < n; i++) x->tmp[c[sym[i]]++] = ord[i];
  memcpy(ord, x->tmp, n * sizeof *ord);
  /* c[k] is now the end of bucket k; bucket 0 (stacks that end here)
   * holds at most one stack, as stacks are distinct */
  *ends = c;
  return 0;
}

/* Also fills lcp[i] (1 <= i < n): the root frames ord[i - 1] and ord[i]
 * share, which the encoder needs and the sort learns for free.  Stacks are
 * distinct, so at most one ends at any depth and the recursion stops. */
static void msd_sort(uint32_t *ord, uint32_t *lcp, const msd_ctx *x, size_t n,
                     uint32_t depth) {
  for (; n > 1; depth++) {
    uint32_t *ends;
    int r = msd_level(ord, lcp, x, n, depth, &ends);
    if (r < 0) return;
    if (r == 0) {
      sort_buckets(ord, lcp, x, ends, 1, x->n_sym, depth);
      return;
    }
  }
}

/* ---- the same on two threads ---------------------------------------------
 * The output phase of a merge has the machine to itself, and the sort is
 * most of it.  Buckets are independent, so the first level that splits the
 * stacks evenly enough gives half of its buckets to a second thread (with
 * counters of its own); a level dominated by one bucket descends into it
 * first.  The result does not depend on the threads. */
#define PAR_MIN 4096 /* smaller groups are not worth a thread */

typedef struct half {
  uint32_t *ord, *lcp;
  msd_ctx x;
  const uint32_t *ends;
  uint32_t k0, k1, depth;
} half;

static void *sort_half(void *arg) {
  const half *h = arg;
  sort_buckets(h->ord, h->lcp, &h->x, h->ends, h->k0, h->k1, h->depth);
  return NULL;
}

/* Bucket ends[k - 1]..ends[k] sizes; the first bucket after which half
 * the stacks are sorted, and the largest bucket. */
static void balance(const uint32_t *ends, uint32_t n_sym, size_t n,
                    uint32_t *split, uint32_t *largest) {
  uint32_t big = 1, best = 0;
  *split = 0;
  for (uint32_t k = 1; k <= n_sym; k++) {
    uint32_t size = ends[k] - ends[k - 1];
    if (size > best) {
      best = size;
      big = k;
    }
    if (!*split && ends[k] >= n / 2) *split = k;
  }
  *largest = big;
}

static void msd_sort_par(uint32_t *ord, uint32_t *lcp, const msd_ctx *x,
                         uint32_t *cnt2, size_t n, uint32_t depth) {
  for (; n > 1; depth++) {
    if (n < PAR_MIN) {
      msd_sort(ord, lcp, x, n, depth);
      return;
    }
    uint32_t *ends;
    int r = msd_level(ord, lcp, x, n, depth, &ends);
    if (r < 0) return;
    if (r > 0) continue;
    uint32_t split, big;
    balance(ends, x->n_sym, n, &split, &big);
    uint32_t bs = ends[big - 1], be = ends[big];
    if ((size_t)(be - bs) * 3 > n * 2) { /* one bucket dominates */
      if (bs > 0) lcp[bs] = depth;
      if (big > 1) sort_buckets(ord, lcp, x, ends, 1, big - 1, depth);
      if (big < x->n_sym) sort_buckets(ord, lcp, x, ends, big + 1, x->n_sym, depth);
      msd_ctx in = msd_at(x, bs);
      msd_sort_par(ord + bs, lcp + bs, &in, cnt2, be - bs, depth + 1);
      return;
    }
    half h = {ord, lcp, {x->c, x->tmp, x->sym, x->pair, x->n_sym, cnt2}, ends,
              split + 1, x->n_sym, depth};
    pthread_t t;
    int threaded = split < x->n_sym && mp_helper_start(&t, sort_half, &h) == 0;
    sort_buckets(ord, lcp, x, ends, 1, threaded ? split : x->n_sym, depth);
    if (threaded) pthread_join(t, NULL);
    return;
  }
}

/* The stacks as the builder sorts them: their order, and the LCPs. */
void mp_radix_sort(const mp_radix_stack *stacks, size_t n,
                        const mp_radix_map *m, const uint64_t *count,
                        const uint64_t *key, sorted *so) {
  uint32_t *rank = frame_ranks(m->n_frames, count, key);
  uint32_t *er = element_ranks(rank, m->map, m->n_ids);
  /* every rank occurs (each linear frame is some stack's) */
  uint32_t n_sym = m->n_frames;
  uint32_t *order = mp_xmalloc((n + 1) * sizeof *order);
  uint32_t *tmp = mp_xmalloc((n + 1) * sizeof *tmp);
  uint32_t *lcp = mp_xcalloc(n + 1, sizeof *lcp);
  for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
  sort_ctx c = {stacks, er};
  if (n_sym <= MSD_MAX_SYMS && n < UINT32_MAX) {
    size_t levels = MSD_LEVELS * ((size_t)n_sym + 1);
    uint32_t *cnt = mp_xmalloc(2 * levels * 4);
    uint32_t *sym = mp_xmalloc((n + 1) * sizeof *sym);
    uint64_t *pair = mp_xmalloc((n + 1) * sizeof *pair);
    msd_ctx x = {&c, tmp, sym, pair, n_sym, cnt};
    msd_sort_par(order, lcp, &x, cnt + levels, n, 0);
    free(pair);
    free(sym);
    free(cnt);
  } else {
    sort_small(&c, order, lcp, n, 0);
  }
  free(tmp);
  if (er != rank) free(er);
  free(rank);
  *so = (sorted){order, lcp, stacks, m->map};
}

