/* rt_roots_mark.c - the roots census's heap side: the live blocks as a
 * table sorted by address, and the marking passes over it.
 *
 * Retained sizes without a pass per root: each block carries a label, 0
 * (no root reaches it yet), r+1 (only root r does) or RR_SHARED (several
 * do).  A root's direct targets get its label; a block whose label changes
 * is pushed, and when popped its words hand its label on (an unlabeled
 * block takes it, one of another root becomes shared, a shared one stays).
 * A label only ever changes twice (none, one root, shared), so every block
 * is scanned at most twice, whatever the number of roots.  Roots named with
 * __memprof_add_root come first and their targets are barriers for the
 * others: a global that holds a named root's pointer does not reach
 * through it.
 *
 * What each root reaches, shared blocks included, takes a pass per root
 * (an epoch per block): its cost is the sum of the roots' reached sets.
 * Once those passes have scanned REACH_BUDGET times the heap, the
 * remaining roots get their retained figures as reached ones and the
 * flag RR_REACHED_PARTIAL.  The passes also give each shared block the
 * set of roots that reach it (rt_roots_bands.c).
 *
 * Last, every unreached block's words mark the unreached blocks they point
 * to as indirect (LeakSanitizer's "indirect leak"); a cycle nothing
 * reaches is indirect throughout, as in LeakSanitizer. */
#include "rt_roots_priv.h"
#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_libc.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/record/rt_sample.h"
#include "runtime/record/rt_stack.h"

#define REACH_BUDGET 8

/* ---- the table ---------------------------------------------------------- */

static void add_block(const rt_block *b, void *ctx) {
  rr_vec *v = ctx;
  rr_blk *k = rr_push(v, sizeof(rr_blk));
  if (!k)
    return;
  uint32_t stack = b->stack == RT_UNSAMPLED ? 0 : b->stack;
  *k = (rr_blk){b->p, b->size, rt_stack_id(stack), 0, 0, 0};
}

static void sift(uint64_t *a, uint64_t n, size_t w, uint64_t i, uint64_t *tmp) {
  for (;;) {
    uint64_t l = 2 * i + 1, m = i;
    if (l < n && a[l * w] > a[m * w])
      m = l;
    if (l + 1 < n && a[(l + 1) * w] > a[m * w])
      m = l + 1;
    if (m == i)
      return;
    rt_memcpy(tmp, a + i * w, w * 8);
    rt_memcpy(a + i * w, a + m * w, w * 8);
    rt_memcpy(a + m * w, tmp, w * 8);
    i = m;
  }
}

void rr_sort(void *base, uint64_t n, size_t elem) {
  uint64_t *a = base, tmp[8];
  size_t w = elem / 8;
  uint64_t i = 1;
  while (i < n && a[(i - 1) * w] <= a[i * w])
    i++;
  if (i >= n) /* the heap's walk is mostly in address order already */
    return;
  for (i = n / 2; i-- > 0;)
    sift(a, n, w, i, tmp);
  for (uint64_t end = n; end-- > 1;) {
    rt_memcpy(tmp, a, w * 8);
    rt_memcpy(a, a + end * w, w * 8);
    rt_memcpy(a + end * w, tmp, w * 8);
    sift(a, end, w, 0, tmp);
  }
}

static rr_chunk *chunk_slot(rr_census *c, uint64_t key) {
  uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> c->chunk_shift;
  while (c->chunks[h].key && c->chunks[h].key != key)
    h = (h + 1) & c->chunk_mask;
  return &c->chunks[h];
}

static int build_index(rr_census *c) {
  uint64_t entries = 0, n_large = 0;
  for (uint64_t i = 0; i < c->n; i++) {
    const rr_blk *k = &c->blk[i];
    if (k->size >= RR_LARGE)
      n_large++;
    else
      entries += ((k->p + (k->size ? k->size - 1 : 0)) >> RR_CHUNK_SHIFT) -
                 (k->p >> RR_CHUNK_SHIFT) + 1;
  }
  int bits = 4;
  while ((1ull << bits) < 2 * entries)
    bits++;
  c->chunk_shift = 64 - bits;
  c->chunk_mask = (1ull << bits) - 1;
  c->chunks_bytes = sizeof(rr_chunk) << bits;
  c->chunks = rt_ialloc(c->chunks_bytes);
  c->large = n_large ? rt_ialloc(n_large * sizeof(uint32_t)) : NULL;
  c->n_large = c->large ? n_large : 0;
  if (!c->chunks || (n_large && !c->large))
    return -1;
  uint64_t large = 0;
  rt_memset(c->chunks, 0, c->chunks_bytes);
  for (uint64_t i = 0; i < c->n; i++) {
    const rr_blk *k = &c->blk[i];
    if (k->size >= RR_LARGE) {
      c->large[large++] = (uint32_t)i;
      continue;
    }
    uint64_t last = (k->p + (k->size ? k->size - 1 : 0)) >> RR_CHUNK_SHIFT;
    for (uint64_t ch = k->p >> RR_CHUNK_SHIFT; ch <= last; ch++) {
      rr_chunk *s = chunk_slot(c, ch + 1);
      if (!s->key)
        *s = (rr_chunk){ch + 1, (uint32_t)i, (uint32_t)i + 1};
      s->hi = (uint32_t)i + 1; /* blocks come in address order */
    }
  }
  return 0;
}

void rr_blocks_free(rr_census *c) {
  rr_vec_free(&c->blocks, sizeof(rr_blk));
  if (c->chunks)
    rt_ifree(c->chunks, c->chunks_bytes);
  if (c->large)
    rt_ifree(c->large, c->n_large * sizeof(uint32_t));
}

int rr_blocks_collect(rr_census *c) {
  rr_vec *v = &c->blocks;
  rt_heap_for_each_live(add_block, v);
  if (v->failed)
    return -1;
  c->blk = v->p;
  c->n = v->len;
  rr_sort(c->blk, c->n, sizeof(rr_blk));
  c->lo = c->n ? c->blk[0].p : 0;
  c->hi = 0;
  c->heap_bytes = 0;
  for (uint64_t i = 0; i < c->n; i++) {
    uint64_t end = c->blk[i].p + (c->blk[i].size ? c->blk[i].size : 1);
    if (end > c->hi)
      c->hi = end;
    c->heap_bytes += c->blk[i].size;
  }
  return build_index(c);
}

/* ---- labels --------------------------------------------------------------- */

typedef struct marker {
  rr_census *c;
  uint32_t *stack;
  uint64_t top;
  int barrier; /* the named roots are done: their targets stop others */
} marker;

static inline void visit(marker *m, uint64_t i, uint32_t mode) {
  rr_blk *k = &m->c->blk[i];
  if (m->barrier && (k->flags & RR_TARGET))
    return;
  uint32_t cur = k->label;
  if (cur == mode || cur == RR_SHARED)
    return;
  k->label = cur == 0 ? mode : RR_SHARED;
  m->stack[m->top++] = (uint32_t)i;
}

/* body for each aligned word of block k that points into a block j. */
#define FOR_EACH_POINTER(c, k, j, body)                                        \
  do {                                                                         \
    const uintptr_t *w_ = (const uintptr_t *)(((k)->p + 7) & ~(uintptr_t)7);   \
    const uintptr_t *e_ = (const uintptr_t *)(((k)->p + (k)->size) & ~(uintptr_t)7); \
    for (; w_ < e_; w_++) {                                                    \
      int64_t j = rr_find((c), *w_);                                           \
      if (j >= 0)                                                              \
        body;                                                                  \
    }                                                                          \
  } while (0)

static void drain(marker *m) {
  while (m->top) {
    uint32_t i = m->stack[--m->top];
    const rr_blk *k = &m->c->blk[i];
    uint32_t mode = k->label;
    FOR_EACH_POINTER(m->c, k, j, visit(m, (uint64_t)j, mode));
  }
}

static void label_root(marker *m, uint32_t r) {
  rr_census *c = m->c;
  const rr_root *root = (const rr_root *)c->roots.p + r;
  const uint32_t *t = (const uint32_t *)c->targets.p + root->first;
  for (uint64_t i = 0; i < root->n_targets; i++)
    visit(m, t[i], r + 1);
  drain(m);
}

/* ---- reached ------------------------------------------------------------- */

/* Root r's reached set; returns the bytes of blocks scanned. */
static uint64_t reach_root(marker *m, uint32_t r) {
  rr_census *c = m->c;
  rr_root *root = (rr_root *)c->roots.p + r;
  const uint32_t *t = (const uint32_t *)c->targets.p + root->first;
  int barrier = root->kind != RR_NAMED;
  uint32_t epoch = r + 1;
  uint64_t bytes = 0, blocks = 0, scanned = 0;
#define REACH(j)                                                               \
  do {                                                                         \
    rr_blk *b_ = &c->blk[j];                                                   \
    if (b_->seen != epoch && !(barrier && (b_->flags & RR_TARGET))) {          \
      b_->seen = epoch;                                                        \
      if (b_->label == RR_SHARED)                                              \
        rr_bands_add(c, (j), r);                                               \
      bytes += b_->size;                                                       \
      blocks++;                                                                \
      m->stack[m->top++] = (uint32_t)(j);                                      \
    }                                                                          \
  } while (0)
  for (uint64_t i = 0; i < root->n_targets; i++)
    REACH(t[i]);
  while (m->top) {
    const rr_blk *k = &c->blk[m->stack[--m->top]];
    scanned += k->size;
    FOR_EACH_POINTER(c, k, j, REACH(j));
  }
#undef REACH
  root->reached_bytes = bytes;
  root->reached_blocks = blocks;
  return scanned;
}

/* ---- the passes ---------------------------------------------------------- */

static void retained(rr_census *c) {
  rr_root *roots = c->roots.p;
  for (uint64_t i = 0; i < c->n; i++) {
    uint32_t l = c->blk[i].label;
    if (l && l != RR_SHARED) {
      roots[l - 1].retained_bytes += c->blk[i].size;
      roots[l - 1].retained_blocks++;
    }
  }
}

static void indirect(rr_census *c) {
  for (uint64_t i = 0; i < c->n; i++) {
    const rr_blk *k = &c->blk[i];
    if (k->label)
      continue;
    FOR_EACH_POINTER(c, k, j, if (!c->blk[j].label && (uint64_t)j != i)
                                  c->blk[j].flags |= RR_INDIRECT);
  }
}

int rr_mark(rr_census *c) {
  size_t cap = (2 * c->n + 1) * sizeof(uint32_t);
  marker m = {c, rt_ialloc(cap), 0, 0};
  if (!m.stack)
    return -1;
  uint32_t nroots = (uint32_t)c->roots.len;
  rr_root *roots = c->roots.p;
  for (int phase = 0; phase < 2; phase++) {
    m.barrier = phase;
    for (uint32_t r = 0; r < nroots; r++)
      if ((roots[r].kind == RR_NAMED) == (phase == 0))
        label_root(&m, r);
  }
  retained(c);
  rr_bands_begin(c);
  uint64_t budget = REACH_BUDGET * (c->heap_bytes + 8 * c->n), spent = 0;
  for (uint32_t r = 0; r < nroots; r++) {
    if (spent <= budget) {
      spent += reach_root(&m, r);
      continue;
    }
    roots[r].reached_bytes = roots[r].retained_bytes;
    roots[r].reached_blocks = roots[r].retained_blocks;
    roots[r].flags |= RR_REACHED_PARTIAL;
  }
  indirect(c);
  rt_ifree(m.stack, cap);
  return 0;
}
