/* test_radix.c - the call-stack radix array of memprof v3/v4
 * (profdata/llvm/radix.c) and the order it holds stacks in
 * (profdata/llvm/radix_sort.c):
 *  - mp_radix_sort against a brute-force reading of its rule (frames
 *    ranked by ascending popularity, then key, then id; stacks compared
 *    root first by rank, a proper prefix first) on random stacks from a
 *    fixed seed: the order and the common root length of each pair of
 *    neighbours, with and without an element map, with ties in
 *    popularity, deep shared roots, more frames than the counting sort
 *    takes, and enough stacks for the two-thread sort;
 *  - build/decode round trips on random stacks with shared roots, through
 *    mp_radix_build and through mp_radix_build_into with an element map
 *    (the same array), and the worked example of docs/indexed-format.md;
 *  - hostile arrays (jumps out, jump to jump, long lengths, frame ids out
 *    of range) refused with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdata/llvm/radix.h"
#include "profdata/llvm/radix_sort.h"
#include "test/unit/check.h"
#include "test/unit/rng.h"

static void test_radix_random(void) {
  for (int round = 0; round < 50; round++) {
    size_t n = 1 + rnd() % 200, nf = 2 + rnd() % 30;
    uint32_t *store = malloc(n * 20 * 4);
    mp_radix_stack *st = malloc(n * sizeof *st);
    uint64_t *count = calloc(nf, 8), *key = malloc(nf * 8);
    for (size_t f = 0; f < nf; f++) key[f] = rnd();
    size_t used = 0, k = 0;
    for (size_t tries = 0; k < n && tries < 20 * n; tries++) {
      uint32_t len = (uint32_t)(rnd() % 20);
      uint32_t *s = store + used;
      for (uint32_t i = 0; i < len; i++)
        s[len - 1 - i] = (uint32_t)(i < 4 ? rnd() % (nf < 2 ? nf : 2) : rnd() % nf);
      int dup = 0; /* the builder takes distinct stacks */
      for (size_t j = 0; j < k && !dup; j++)
        dup = st[j].len == len && !memcmp(st[j].frames, s, len * 4);
      if (dup) continue;
      for (uint32_t i = 0; i < len; i++) count[s[i]]++;
      st[k++] = (mp_radix_stack){s, len};
      used += len;
    }
    n = k;
    uint32_t *arr, *pos = malloc(n * 4), out[32];
    size_t na;
    mp_radix_build(st, n, count, key, &arr, &na, pos);
    CHECK(na <= used + 2 * n);
    for (size_t i = 0; i < n; i++) {
      mp_err err;
      long l = mp_radix_decode((unsigned char *)arr, na, pos[i], nf, out, 32,
                               &err);
      CHECK(l == st[i].len, "stack %zu decodes to %ld frames, not %u: %s", i,
            l, st[i].len, l < 0 ? err.msg : "");
      if (l != st[i].len) break;
      CHECK(l < 0 || memcmp(out, st[i].frames, (size_t)l * 4) == 0);
    }
    free(arr);
    free(pos);
    free(store);
    free(st);
    free(count);
    free(key);
  }
}

/* Rank of each frame as the builder orders them: ascending count, then
 * key, then id. */
static const uint64_t *g_cnt, *g_key;
static int cmp_rank(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (g_cnt[a] != g_cnt[b]) return g_cnt[a] < g_cnt[b] ? -1 : 1;
  if (g_key[a] != g_key[b]) return g_key[a] < g_key[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* Root-first comparison of two stacks by frame rank; a prefix first. */
static int cmp_root_first(const mp_radix_stack *a, const mp_radix_stack *b,
                          const uint32_t *rank) {
  for (uint32_t d = 0; d < a->len && d < b->len; d++) {
    uint32_t ra = rank[a->frames[a->len - 1 - d]],
             rb = rank[b->frames[b->len - 1 - d]];
    if (ra != rb) return ra < rb ? -1 : 1;
  }
  return a->len < b->len ? -1 : a->len > b->len;
}

/* Enough stacks for the builder to sort on two threads: one root chain
 * that nearly all share (a level dominated by one bucket), then eight
 * even branches (split between the threads), then tails that make every
 * stack distinct.  The array must hold the stacks in root-first rank
 * order (positions grow with it) and decode to each stack. */
static void test_radix_parallel(void) {
  enum { N = 20000, NF = 300 };
  uint32_t *store = malloc((size_t)N * 32 * 4);
  mp_radix_stack *st = malloc(N * sizeof *st);
  uint64_t count[NF] = {0}, key[NF];
  for (uint32_t f = 0; f < NF; f++) key[f] = rnd();
  size_t used = 0;
  for (uint32_t i = 0; i < N; i++) {
    uint32_t root[32], len = 0;
    if (i % 20) { /* the dominant chain, then a branch */
      root[len++] = 1;
      root[len++] = 2;
      root[len++] = 10 + i % 8;
    } else {
      root[len++] = 20 + (uint32_t)(rnd() % 50);
    }
    uint32_t extra = (uint32_t)(rnd() % 12);
    for (uint32_t k = 0; k < extra; k++) root[len++] = 100 + (uint32_t)(rnd() % 100);
    root[len++] = 200 + i / NF % 100; /* i in two digits: all distinct */
    root[len++] = i % NF;
    uint32_t *s = store + used;
    for (uint32_t d = 0; d < len; d++) s[len - 1 - d] = root[d]; /* leaf first */
    for (uint32_t d = 0; d < len; d++) count[s[d]]++;
    st[i] = (mp_radix_stack){s, len};
    used += len;
  }
  uint32_t by[NF], rank[NF];
  for (uint32_t f = 0; f < NF; f++) by[f] = f;
  g_cnt = count;
  g_key = key;
  qsort(by, NF, 4, cmp_rank);
  for (uint32_t r = 0; r < NF; r++) rank[by[r]] = r;
  uint32_t *arr, *pos = malloc(N * 4), out[32];
  size_t na;
  mp_radix_build(st, N, count, key, &arr, &na, pos);
  uint32_t *ord = malloc(N * 4);
  for (uint32_t i = 0; i < N; i++) ord[i] = i;
  int bad = 0; /* positions are distinct: shell-sort the stacks by them */
  for (uint32_t gap = N / 2; gap > 0; gap /= 2)
    for (uint32_t i = gap; i < N; i++)
      for (uint32_t j = i; j >= gap && pos[ord[j - gap]] > pos[ord[j]]; j -= gap) {
        uint32_t t = ord[j];
        ord[j] = ord[j - gap];
        ord[j - gap] = t;
      }
  for (uint32_t i = 1; i < N && !bad; i++)
    if (cmp_root_first(&st[ord[i - 1]], &st[ord[i]], rank) >= 0) bad = 1;
  CHECK(!bad);
  for (uint32_t i = 0; i < N && !bad; i++) {
    mp_err err;
    long l = mp_radix_decode((unsigned char *)arr, na, pos[i], NF, out, 32, &err);
    if (l != st[i].len || memcmp(out, st[i].frames, (size_t)l * 4)) bad = 1;
  }
  CHECK(!bad);
  free(ord);
  free(arr);
  free(pos);
  free(st);
  free(store);
}

static void test_radix_worked_example(void) {
  /* docs/indexed-format.md's radix example: the array llvm-profdata wrote for m.cc */
  uint32_t a[16] = {1, (uint32_t)-4, 3, 0, 1, 3, 1, 1,
                    1, (uint32_t)-4, 3, 0, 2, 4, 1, 2};
  uint32_t out[8];
  mp_err err;
  CHECK(mp_radix_decode((unsigned char *)a, 16, 2, 5, out, 8, &err) == 3);
  CHECK(out[0] == 0 && out[1] == 1 && out[2] == 3);
  CHECK(mp_radix_decode((unsigned char *)a, 16, 0, 5, out, 8, &err) == 1);
  CHECK(out[0] == 3);
  CHECK(mp_radix_decode((unsigned char *)a, 16, 8, 5, out, 8, &err) == 1);
  CHECK(out[0] == 4);
  /* the builder reproduces the same array from the same input */
  uint32_t s0[] = {3}, s2[] = {0, 1, 3}, s6[] = {1}, s8[] = {4},
           s10[] = {0, 2, 4}, s14[] = {2};
  mp_radix_stack st[] = {{s0, 1}, {s2, 3}, {s6, 1}, {s8, 1}, {s10, 3},
                         {s14, 1}};
  /* all frames occur twice; FrameId order as in that file (consistent
   * with its frame array: F1 < F2, F3 < F4) */
  uint64_t count[5] = {2, 2, 2, 2, 2}, key[5] = {4, 1, 3, 0, 2};
  uint32_t *arr, pos[6];
  size_t n;
  mp_radix_build(st, 6, count, key, &arr, &n, pos);
  CHECK(n == 16 && memcmp(arr, a, sizeof a) == 0);
  CHECK(pos[0] == 0 && pos[1] == 2 && pos[2] == 6 && pos[3] == 8 &&
        pos[4] == 10 && pos[5] == 14);
  free(arr);
}

static void test_radix_hostile(void) {
  mp_err err;
  uint32_t out[8];
  uint32_t jump_out[] = {2, 0, (uint32_t)-100};
  CHECK(mp_radix_decode((unsigned char *)jump_out, 3, 0, 5, out, 8, &err) < 0);
  uint32_t jump_jump[] = {2, (uint32_t)-1, (uint32_t)-1, 0, 0};
  CHECK(mp_radix_decode((unsigned char *)jump_jump, 5, 0, 5, out, 8, &err) < 0);
  uint32_t int_min[] = {1, 0x80000000u, 0};
  CHECK(mp_radix_decode((unsigned char *)int_min, 3, 0, 5, out, 8, &err) < 0);
  uint32_t too_long[] = {0xffffffffu, 0, 0};
  CHECK(mp_radix_decode((unsigned char *)too_long, 3, 0, 5, out, 8, &err) < 0);
  uint32_t bad_frame[] = {1, 9};
  CHECK(mp_radix_decode((unsigned char *)bad_frame, 2, 0, 5, out, 8, &err) < 0);
  CHECK(strstr(err.msg, "frame id 9") != NULL);
  CHECK(mp_radix_decode((unsigned char *)bad_frame, 2, 7, 5, out, 8, &err) < 0);
}

/* Frame ranks by the rule: rank[f] for linear frames f < nf. */
static uint32_t *brute_ranks(uint32_t nf, const uint64_t *count,
                             const uint64_t *key) {
  uint32_t *by = malloc((nf + 1) * 4), *rank = malloc((nf + 1) * 4);
  for (uint32_t f = 0; f < nf; f++) by[f] = f;
  g_cnt = count;
  g_key = key;
  qsort(by, nf, 4, cmp_rank);
  for (uint32_t r = 0; r < nf; r++) rank[by[r]] = r;
  free(by);
  return rank;
}

static const mp_radix_stack *g_st;
static const uint32_t *g_rank;
static int cmp_index(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  return cmp_root_first(&g_st[a], &g_st[b], g_rank);
}

/* mp_radix_sort of `el` (element ids, mapped by m) against the brute-force
 * order and common root lengths of `lin`, the same stacks in linear frame
 * ids. */
static void check_sort(const mp_radix_stack *el, const mp_radix_stack *lin,
                       size_t n, const mp_radix_map *m, const uint64_t *count,
                       const uint64_t *key, const char *what) {
  uint32_t *rank = brute_ranks(m->n_frames, count, key);
  uint32_t *want = malloc((n + 1) * 4);
  for (uint32_t i = 0; i < n; i++) want[i] = i;
  g_st = lin;
  g_rank = rank;
  qsort(want, n, 4, cmp_index);
  sorted so;
  mp_radix_sort(el, n, m, count, key, &so);
  size_t bad_order = n, bad_lcp = n;
  for (size_t i = 0; i < n && bad_order == n; i++)
    if (so.order[i] != want[i]) bad_order = i;
  for (size_t i = 1; i < n && bad_lcp == n; i++) {
    const mp_radix_stack *a = &lin[want[i - 1]], *b = &lin[want[i]];
    uint32_t l = 0;
    while (l < a->len && l < b->len &&
           a->frames[a->len - 1 - l] == b->frames[b->len - 1 - l])
      l++;
    if (so.lcp[i] != l) bad_lcp = i;
  }
  CHECK(bad_order == n, "%s: %zu stacks, order differs at %zu", what, n,
        bad_order);
  CHECK(bad_lcp == n, "%s: %zu stacks, common root length differs at %zu",
        what, n, bad_lcp);
  free(so.order);
  free(so.lcp);
  free(want);
  free(rank);
}

/* n distinct random stacks over nf frames (lengths below max_len, the
 * first `shared` root frames mostly a common chain), as element ids of a map of
 * n_ids elements onto the frames (each frame some element's) and as
 * linear ids; the frames' counts over all stacks. */
typedef struct stack_set {
  mp_radix_stack *el, *lin;
  uint32_t *el_store, *lin_store, *map;
  size_t n, used;
  uint64_t *count, *key;
  mp_radix_map m;
} stack_set;

static void make_stacks(stack_set *s, size_t n, uint32_t nf, uint32_t max_len,
                        uint32_t shared, uint32_t n_ids) {
  memset(s, 0, sizeof *s);
  s->el = malloc(n * sizeof *s->el);
  s->lin = malloc(n * sizeof *s->lin);
  s->el_store = malloc(n * max_len * 4);
  s->lin_store = malloc(n * max_len * 4);
  s->map = malloc((n_ids + 1) * 4);
  for (uint32_t e = 0; e < n_ids; e++)
    s->map[e] = e < nf ? e : (uint32_t)(rnd() % nf);
  s->count = calloc(nf, 8);
  s->key = malloc(nf * 8);
  /* keys from few values now and then: ties in key need the id */
  for (uint32_t f = 0; f < nf; f++) s->key[f] = rnd() % 4 ? rnd() : rnd() % 3;
  size_t k = 0;
  for (size_t tries = 0; k < n && tries < 20 * n; tries++) {
    uint32_t len = 1 + (uint32_t)(rnd() % (max_len - 1));
    uint32_t *e = s->el_store + s->used, *l = s->lin_store + s->used;
    for (uint32_t d = 0; d < len; d++) { /* d: depth from the root */
      /* the first `shared` root frames mostly one chain, now and then
       * another frame: groups that split deep, and levels one bucket
       * dominates */
      uint32_t pick = (uint32_t)(d < shared && rnd() % 8 ? d % n_ids
                                                         : rnd() % n_ids);
      e[len - 1 - d] = pick;
      l[len - 1 - d] = s->map[pick];
    }
    int dup = 0; /* the builder takes distinct stacks (of linear frames) */
    for (size_t j = k; j-- > 0 && !dup;)
      dup = s->lin[j].len == len && !memcmp(s->lin[j].frames, l, len * 4);
    if (dup) continue;
    for (uint32_t d = 0; d < len; d++) s->count[l[d]]++;
    s->el[k] = (mp_radix_stack){e, len};
    s->lin[k++] = (mp_radix_stack){l, len};
    s->used += len;
  }
  s->n = k;
  s->m = (mp_radix_map){s->map, n_ids, nf};
}

static void free_stacks(stack_set *s) {
  free(s->el);
  free(s->lin);
  free(s->el_store);
  free(s->lin_store);
  free(s->map);
  free(s->count);
  free(s->key);
}

/* The sort, then the array built from element ids (build_into) and from
 * linear ids (build): the same elements, positions that decode to each
 * stack. */
static void check_set(stack_set *s, const char *what) {
  mp_radix_map plain = {NULL, s->m.n_frames, s->m.n_frames};
  check_sort(s->lin, s->lin, s->n, &plain, s->count, s->key, what);
  check_sort(s->el, s->lin, s->n, &s->m, s->count, s->key, what);
  size_t max = mp_radix_max_len(s->el, s->n);
  unsigned char *into = malloc(max * 4 + 1);
  uint32_t *pos_into = malloc((s->n + 1) * 4), *pos = malloc((s->n + 1) * 4);
  /* at an odd address: the array is any-aligned little-endian u32s */
  size_t n_into = mp_radix_build_into(s->el, s->n, &s->m, s->count, s->key,
                                      into + 1, pos_into);
  uint32_t *arr;
  size_t na;
  mp_radix_build(s->lin, s->n, s->count, s->key, &arr, &na, pos);
  CHECK(n_into == na && n_into <= max &&
            memcmp(into + 1, arr, na * 4) == 0 &&
            memcmp(pos_into, pos, s->n * 4) == 0,
        "%s: build_into (%zu elements) and build (%zu) differ", what, n_into,
        na);
  uint32_t *out = malloc(256 * 4);
  size_t bad = s->n;
  for (size_t i = 0; i < s->n && bad == s->n; i++) {
    mp_err err;
    long l = mp_radix_decode(into + 1, n_into, pos_into[i], s->m.n_frames,
                             out, 256, &err);
    if (l != s->lin[i].len || memcmp(out, s->lin[i].frames, (size_t)l * 4))
      bad = i;
  }
  CHECK(bad == s->n, "%s: stack %zu does not decode to itself", what, bad);
  free(out);
  free(arr);
  free(pos);
  free(pos_into);
  free(into);
}

static void test_sort_random(void) {
  static const struct {
    size_t n;
    uint32_t nf, max_len, shared, extra_ids, rounds;
    const char *what;
  } cases[] = {
      {1, 1, 4, 0, 0, 5, "one stack"},
      {40, 3, 12, 2, 5, 40, "few frames"},
      {200, 30, 20, 4, 40, 40, "small"},
      {3000, 300, 24, 6, 100, 4, "counting sort"},
      {400, 40, 120, 70, 10, 4, "deep shared roots"},
      {9000, 2000, 40, 8, 500, 2, "two threads"},
      {3000, 70000, 4, 0, 0, 1, "more frames than counting takes"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (uint32_t r = 0; r < cases[c].rounds; r++) {
      stack_set s;
      make_stacks(&s, cases[c].n, cases[c].nf, cases[c].max_len,
                  cases[c].shared, cases[c].nf + cases[c].extra_ids);
      check_set(&s, cases[c].what);
      free_stacks(&s);
    }
}

int main(void) {
  test_sort_random();
  test_radix_random();
  test_radix_parallel();
  test_radix_worked_example();
  test_radix_hostile();
  return check_result();
}
