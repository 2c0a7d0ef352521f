/* rt_roots_build.c - the roots census's growing lists: arrays of the
 * runtime's own memory (rr_vec), the string pool, and the roots with
 * their direct targets (the blocks their words point into), which the
 * other rt_roots files fill. */
#include "rt_roots_priv.h"
#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_libc.h"

#define MAX_ROOTS (1u << 20)

void *rr_push(rr_vec *v, size_t elem) {
  if (v->failed)
    return NULL;
  if (v->len == v->cap) {
    size_t cap = v->cap ? 2 * v->cap : 4096 / elem;
    void *n = rt_ialloc(cap * elem);
    if (!n) {
      v->failed = 1;
      return NULL;
    }
    if (v->p) {
      rt_memcpy(n, v->p, v->len * elem);
      rt_ifree(v->p, v->cap * elem);
    }
    v->p = n;
    v->cap = cap;
  }
  return (char *)v->p + elem * v->len++;
}

void rr_vec_free(rr_vec *v, size_t elem) {
  if (v->p)
    rt_ifree(v->p, v->cap * elem);
  *v = (rr_vec){0};
}

uint64_t rr_str(rr_census *c, const char *s, size_t n) {
  uint64_t at = c->strs.len;
  for (size_t i = 0; i <= n; i++) {
    char *d = rr_push(&c->strs, 1);
    if (!d) {
      c->failed = 1;
      return 0;
    }
    *d = i < n ? s[i] : 0;
  }
  return at;
}

void rr_root_begin(rr_census *c, uint32_t kind, uint32_t module, uint64_t offset,
                   uint64_t size, uint64_t name) {
  rr_root *r = c->roots.len < MAX_ROOTS ? rr_push(&c->roots, sizeof(rr_root)) : NULL;
  if (!r) {
    c->failed = 1;
    return;
  }
  *r = (rr_root){kind, 0, module, offset, size, name, c->targets.len, 0, 0, 0, 0, 0};
}

void rr_target(rr_census *c, int64_t blk) {
  uint32_t *t = rr_push(&c->targets, sizeof(uint32_t));
  if (!t) {
    c->failed = 1;
    return;
  }
  *t = (uint32_t)blk;
  if (c->roots.len)
    ((rr_root *)c->roots.p)[c->roots.len - 1].n_targets++;
}

void rr_scan(rr_census *c, const void *lo, const void *hi) {
  const uintptr_t *w = (const uintptr_t *)(((uintptr_t)lo + 7) & ~(uintptr_t)7);
  const uintptr_t *e = (const uintptr_t *)((uintptr_t)hi & ~(uintptr_t)7);
  c->scanned += (uintptr_t)e - (uintptr_t)w;
  for (; w < e; w++) {
    int64_t j = rr_find(c, *w);
    if (j >= 0)
      rr_target(c, j);
  }
}

void rr_root_end(rr_census *c) {
  if (c->roots.len && !((rr_root *)c->roots.p)[c->roots.len - 1].n_targets)
    c->roots.len--; /* it points to no block */
}
