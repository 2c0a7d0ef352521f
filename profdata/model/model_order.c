/* model_order.c - the end of a merge (model.h, mp_profile_finish): every
 * site gets its representative fields, and a profile merged from several
 * inputs is put in one canonical order, so that the same inputs give the
 * same bytes whatever order and grouping they were merged in (a fleet
 * merges as a tree, build systems cache by content).
 *
 * A profile read from one input keeps that input's order: that is the
 * order llvm-profdata writes, and a merge of one raw input stays
 * byte-identical to its output.  A profile merged from several is sorted:
 * records by GUID, alloc and call sites by a 64-bit hash of their stacks'
 * frames (GUID, line offset, column, inline flag, leaf first), equal
 * hashes by the frames themselves, then length; callee lists by GUID.  The writers assign frame and stack ids in the
 * order they meet them in records, so these follow. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "data_access.h"
#include "model.h"

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_record(const void *a, const void *b) {
  return cmp_u64(&((const mp_record *)a)->guid, &((const mp_record *)b)->guid);
}

static int cmp_frame(const mp_frame *a, const mp_frame *b) {
  if (a->guid != b->guid) return a->guid < b->guid ? -1 : 1;
  if (a->line_offset != b->line_offset) return a->line_offset < b->line_offset ? -1 : 1;
  if (a->column != b->column) return a->column < b->column ? -1 : 1;
  return (int)a->is_inline - (int)b->is_inline;
}

int mp_stack_cmp(const mp_profile *p, uint32_t sa, uint32_t sb) {
  const uint32_t *fa = mp_stack_frames(p, sa), *fb = mp_stack_frames(p, sb);
  uint32_t na = p->stacks[sa].len, nb = p->stacks[sb].len;
  for (uint32_t i = 0; i < na && i < nb; i++) {
    int c = fa[i] == fb[i] ? 0 : cmp_frame(&p->frames[fa[i]], &p->frames[fb[i]]);
    if (c) return c;
  }
  return na < nb ? -1 : na > nb;
}

/* Stacks are ordered by a hash of their frames' contents first (one
 * compare instead of a walk over both stacks), and by the frames
 * themselves only when two hashes are equal: an order that depends on
 * nothing but the stacks' contents. */
typedef struct order_ctx {
  const mp_profile *p;
  const uint64_t *key; /* per stack id */
} order_ctx;

static uint64_t content_key(const mp_profile *p, uint32_t s) {
  const uint32_t *f = mp_stack_frames(p, s);
  uint64_t h = mp_mix64(p->stacks[s].len);
  for (uint32_t i = 0; i < p->stacks[s].len; i++) {
    const mp_frame *x = &p->frames[f[i]];
    h = mp_mix64(h ^ x->guid);
    h = mp_mix64(h ^ ((uint64_t)x->line_offset << 32 | x->column) ^ x->is_inline);
  }
  return h;
}

static int cmp_keyed(uint32_t sa, uint32_t sb, const order_ctx *o) {
  uint64_t ka = o->key[sa], kb = o->key[sb];
  if (ka != kb) return ka < kb ? -1 : 1;
  return mp_stack_cmp(o->p, sa, sb);
}

static int cmp_alloc(const void *a, const void *b, void *ctx) {
  return cmp_keyed(((const mp_alloc_site *)a)->stack,
                   ((const mp_alloc_site *)b)->stack, ctx);
}

static int cmp_call(const void *a, const void *b, void *ctx) {
  return cmp_keyed(((const mp_call_site *)a)->stack,
                   ((const mp_call_site *)b)->stack, ctx);
}

/* Sites live in segments (mp_alloc_of): sorted in a copy, put back. */
static void sort_allocs(order_ctx *o, mp_record *r, mp_alloc_site **buf,
                        size_t *cap) {
  MP_VEC_RESERVE(*buf, *cap, r->n_allocs);
  for (size_t j = 0; j < r->n_allocs; j++) (*buf)[j] = *mp_alloc_of(r, j);
  qsort_r(*buf, r->n_allocs, sizeof **buf, cmp_alloc, o);
  for (size_t j = 0; j < r->n_allocs; j++) *mp_alloc_of(r, j) = (*buf)[j];
}

static void sort_canonically(mp_profile *p) {
  if (p->n_records > 1)
    qsort(p->records, p->n_records, sizeof *p->records, cmp_record);
  uint64_t *key = mp_xmalloc((p->n_stacks + 1) * sizeof *key);
  for (size_t s = 0; s < p->n_stacks; s++) key[s] = content_key(p, (uint32_t)s);
  order_ctx o = {p, key};
  mp_alloc_site *buf = NULL;
  size_t cap = 0;
  for (size_t i = 0; i < p->n_records; i++) {
    mp_record *r = &p->records[i];
    if (r->n_allocs > 1) sort_allocs(&o, r, &buf, &cap);
    if (r->n_calls > 1)
      qsort_r(r->calls, r->n_calls, sizeof *r->calls, cmp_call, &o);
    for (size_t j = 0; j < r->n_calls; j++)
      if (r->calls[j].n_callees > 1)
        qsort(r->calls[j].callees, r->calls[j].n_callees, 8, cmp_u64);
  }
  free(buf);
  free(key);
  mp_profile_reindex(p);
}

void mp_profile_finish(mp_profile *p) {
  for (size_t i = 0; i < p->n_records; i++) {
    mp_record *r = &p->records[i];
    for (size_t j = 0; j < r->n_allocs; j++) {
      mp_alloc_site *a = mp_alloc_of(r, j);
      if (!a->has_rep) continue;
      mp_site_settle_rep(a);
      mpf_mib_rep_put(&a->mib, &a->rep);
      a->has_rep = 0;
    }
  }
  if (p->inputs_with_sites > 1) sort_canonically(p);
  mp_dap_sort_canonically(p);
}
