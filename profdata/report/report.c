/* report.c - the report model (report.h): one entry per distinct allocation
 * context of the merged profile, the summary, orderings, per-function and
 * per-file totals, and the match against a --base profile.
 *
 * Rankings: bytes, allocations and accesses rank by their totals, largest
 * first; lifetime by the average lifetime, longest first; density by the
 * average lifetime access density, lowest first (the least-touched memory
 * is what the question "what is cold" is after).  Ties go to the larger
 * total size, then to the earlier context, so output is deterministic.
 */
#define _GNU_SOURCE
#include "common/hashmap.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Allocations living under this long on average are "short-lived". */
#define SHORT_LIVED_MS 1.0
/* Access counts look missing when more of the contexts than this have
 * none (report.h). */
#define ACCESSLESS_PERCENT 80

static int has_field(const mp_profile *p, unsigned tag) {
  return !p->mib_fields || (p->mib_fields >> tag & 1);
}

/* The MIB of every distinct stack, from the first record listing it (the
 * records of an inlined allocation's parents hold the same MIB).  A leaf
 * named from a symbol table is code without debug information (a system
 * library's): like a leaf in no given binary, it is inside a library,
 * whose allocation call clang does not compile. */
static void collect_contexts(rpt *r) {
  const mp_profile *p = r->p;
  uint8_t *seen = mp_xcalloc(p->n_stacks + 1, 1);
  size_t cap = 0;
  for (size_t i = 0; i < p->n_records; i++)
    for (size_t j = 0; j < p->records[i].n_allocs; j++) {
      const mp_alloc_site *a = mp_alloc_of(&p->records[i], j);
      if (seen[a->stack] || p->stacks[a->stack].len == 0) continue;
      seen[a->stack] = 1;
      MP_VEC_RESERVE(r->ctx, cap, r->n_ctx + 1);
      int lib = a->in_library ||
                rpt_frame_from_symtab(r, mp_stack_frames(p, a->stack)[0]);
      r->ctx[r->n_ctx++] = (rpt_ctx){a->stack, 0, &a->mib, RPT_NONE, (uint8_t)lib, 0, 0};
    }
  free(seen);
}

/* How many contexts and distinct frames are named from symbol tables.  A
 * stack's outermost frame does not count: it is where the process or the
 * thread began (_start, which the C runtime's crt1.o brings without debug
 * information into programs built with -g; clone3), not the program's
 * code. */
static void count_symtab(rpt *r) {
  const mp_profile *p = r->p;
  uint8_t *seen = mp_xcalloc(p->n_frames + 1, 1);
  for (size_t i = 0; i < r->n_ctx; i++) {
    const uint32_t *f = mp_stack_frames(p, r->ctx[i].stack);
    int any = 0;
    for (uint32_t k = 0; k + 1 < p->stacks[r->ctx[i].stack].len; k++) {
      if (!rpt_frame_from_symtab(r, f[k])) continue;
      any = 1;
      r->sum.symtab_frames += !seen[f[k]];
      seen[f[k]] = 1;
    }
    r->sum.symtab_ctx += any;
  }
  free(seen);
}

static void summarize(rpt *r) {
  rpt_summary *s = &r->sum;
  count_symtab(r);
  for (size_t i = 0; i < r->n_ctx; i++) {
    const rpt_ctx *c = &r->ctx[i];
    const mpf_mib *m = c->mib;
    s->contexts++;
    s->allocs += m->AllocCount;
    s->bytes += m->TotalSize;
    s->lifetime += m->TotalLifetime;
    s->accesses += m->TotalAccessCount;
    r->accessless_ctx +=
        m->TotalAccessCount == 0 && m->TotalLifetimeAccessDensity == 0;
    uint64_t *bytes = c->verdict == RPT_COLD  ? &s->bytes_cold
                      : c->verdict == RPT_HOT ? &s->bytes_hot
                                              : &s->bytes_notcold;
    uint64_t *n = c->verdict == RPT_COLD  ? &s->ctx_cold
                  : c->verdict == RPT_HOT ? &s->ctx_hot
                                          : &s->ctx_notcold;
    *bytes += m->TotalSize;
    (*n)++;
    if (r->sites[c->site].attr == RPT_AMBIGUOUS) {
      s->bytes_ambiguous += m->TotalSize;
      s->ctx_ambiguous++;
    }
    if (r->sites[c->site].attr == RPT_UNMATCHED) s->bytes_unmatched += m->TotalSize;
    if (r->has_accesses && m->TotalAccessCount == 0) {
      s->never_accessed_ctx++;
      s->never_accessed_allocs += m->AllocCount;
      s->never_accessed_bytes += m->TotalSize;
    }
    if (r->has_lifetime && m->AllocCount &&
        rpt_avg_lifetime_ms(c) < SHORT_LIVED_MS) {
      s->short_lived_allocs += m->AllocCount;
      s->short_lived_bytes += m->TotalSize;
    }
  }
  /* A program no instrumented code ran in counted only what the
   * runtime's mem and str interceptors saw: no verdict can be had. */
  r->no_access_seen = r->p->uninstrumented ||
      (r->n_ctx && r->accessless_ctx * 100 > r->n_ctx * ACCESSLESS_PERCENT);
  s->sites = r->n_sites;
  for (size_t k = 0; k < r->n_sites; k++) {
    const rpt_site *t = &r->sites[k];
    s->site_cold += t->attr == RPT_COLD;
    s->site_notcold += t->attr == RPT_NOTCOLD;
    s->site_hot += t->attr == RPT_HOT;
    s->site_ambiguous += t->attr == RPT_AMBIGUOUS;
    s->site_unmatched += t->attr == RPT_UNMATCHED;
    s->mib_cold += t->mib_cold;
    s->mib_notcold += t->mib_notcold;
  }
}

rpt *rpt_build(const mp_profile *p, const rpt_opts *o) {
  rpt *r = mp_xcalloc(1, sizeof *r);
  r->p = p;
  r->opts = *o;
  r->names = mp_xcalloc(p->n_strings + 1, sizeof *r->names);
  r->files = mp_xcalloc(p->n_strings + 1, sizeof *r->files);
  r->guid_names = mp_xcalloc(p->n_frames + 1, sizeof *r->guid_names);
  for (size_t i = 0; i < p->n_frames && !r->has_names; i++)
    r->has_names = p->syms[i].name != MP_NO_STRING;
  r->has_accesses = has_field(p, 2);
  r->has_lifetime = has_field(p, 10);
  r->has_density = has_field(p, 23);
  collect_contexts(r);
  rpt_find_eh_pool(r);
  rpt_decide_sites(r);
  summarize(r);
  return r;
}

void rpt_free(rpt *r) {
  if (!r) return;
  for (size_t i = 0; i < r->p->n_strings; i++) free(r->names[i]);
  free(r->names);
  for (size_t i = 0; i < r->p->n_strings; i++) free(r->files[i]);
  free(r->files);
  for (size_t i = 0; i < r->p->n_frames; i++) free(r->guid_names[i]);
  free(r->guid_names);
  free(r->ctx);
  free(r->sites);
  rpt_timeline_free(r->tl);
  rpt_roots_free(r->roots);
  free(r);
}

/* ---- values and orderings -------------------------------------------- */

double rpt_avg_size(const rpt_ctx *c) {
  return c->mib->AllocCount ? (double)c->mib->TotalSize / c->mib->AllocCount : 0;
}

double rpt_sampling_error(const rpt *r, const rpt_ctx *c) {
  uint64_t R = mp_max_interval(r->p);
  if (!R || !c->mib->AllocCount) return -1;
  double n = c->mib->AllocCount, s = rpt_avg_size(c);
  double p = -expm1(-(s > 1 ? s : 1) / (double)R);
  return 1.96 * sqrt((1 - p) / (n * p));
}

const char *rpt_error_text(double err, char *buf, size_t n) {
  if (err < 0)
    snprintf(buf, n, "exact");
  else if (err >= 9.995)
    snprintf(buf, n, "+->999%%");
  else
    snprintf(buf, n, "+-%d%%", (int)(err * 100 + 0.5)); /* as the HTML page */
  return buf;
}

double rpt_avg_lifetime_ms(const rpt_ctx *c) {
  return c->mib->AllocCount ? (double)c->mib->TotalLifetime / c->mib->AllocCount
                            : 0;
}

double rpt_density(const rpt_ctx *c) {
  return c->mib->AllocCount ? (double)c->mib->TotalLifetimeAccessDensity /
                                  c->mib->AllocCount / 100.0
                            : 0;
}

uint64_t rpt_value(const rpt_ctx *c, rpt_key k) {
  switch (k) {
  case RPT_BYTES: return c->mib->TotalSize;
  case RPT_ALLOCS: return c->mib->AllocCount;
  case RPT_LIFETIME: return c->mib->TotalLifetime;
  case RPT_DENSITY: return c->mib->TotalLifetimeAccessDensity;
  case RPT_ACCESSES: return c->mib->TotalAccessCount;
  }
  return 0;
}

int rpt_verdicts_known(const rpt *r) {
  return r->has_density && !r->no_access_seen;
}

int rpt_accesses_meaningful(const rpt *r) { return !r->p->uninstrumented; }

const char *rpt_key_name(rpt_key k) {
  static const char *const names[] = {"bytes", "allocs", "lifetime", "density",
                                      "accesses"};
  return names[k];
}

const char *rpt_verdict_name(unsigned v) {
  switch (v) {
  case RPT_COLD: return "cold";
  case RPT_HOT: return "hot";
  case RPT_NOTCOLD: return "notcold";
  case RPT_AMBIGUOUS: return "ambiguous";
  case RPT_UNMATCHED: return "unmatched";
  }
  return "none";
}

/* Sort key: larger ranks first. */
static double rank_of(const rpt_ctx *c, rpt_key k) {
  switch (k) {
  case RPT_LIFETIME: return rpt_avg_lifetime_ms(c);
  case RPT_DENSITY: return -rpt_density(c);
  default: return (double)rpt_value(c, k);
  }
}

static int cmp_ctx(const void *a, const void *b, void *arg) {
  const rpt *r = ((void **)arg)[0];
  rpt_key k = *(rpt_key *)((void **)arg)[1];
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  double x = rank_of(&r->ctx[i], k), y = rank_of(&r->ctx[j], k);
  if (x != y) return x > y ? -1 : 1;
  uint64_t bx = r->ctx[i].mib->TotalSize, by = r->ctx[j].mib->TotalSize;
  if (bx != by) return bx > by ? -1 : 1;
  return i < j ? -1 : i > j;
}

uint32_t *rpt_order(const rpt *r, rpt_key k) {
  uint32_t *o = mp_xmalloc((r->n_ctx + 1) * sizeof *o);
  for (size_t i = 0; i < r->n_ctx; i++) o[i] = (uint32_t)i;
  void *arg[2] = {(void *)r, &k};
  qsort_r(o, r->n_ctx, sizeof *o, cmp_ctx, arg);
  return o;
}

/* ---- per function and per file ---------------------------------------- */

static int cmp_group(const void *a, const void *b, void *arg) {
  rpt_key k = *(rpt_key *)arg;
  const rpt_group *x = a, *y = b;
  double vx, vy;
  if (k == RPT_LIFETIME || k == RPT_DENSITY) {
    vx = x->allocs ? (double)(k == RPT_LIFETIME ? x->lifetime : x->density) / x->allocs : 0;
    vy = y->allocs ? (double)(k == RPT_LIFETIME ? y->lifetime : y->density) / y->allocs : 0;
    if (k == RPT_DENSITY) vx = -vx, vy = -vy;
  } else {
    vx = (double)(k == RPT_BYTES ? x->bytes : k == RPT_ALLOCS ? x->allocs : x->accesses);
    vy = (double)(k == RPT_BYTES ? y->bytes : k == RPT_ALLOCS ? y->allocs : y->accesses);
  }
  if (vx != vy) return vx > vy ? -1 : 1;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* The key a frame is totalled under: its function GUID, or its file's
 * string id (+1; 0 when unknown). */
static uint64_t group_key(const rpt *r, uint32_t f, rpt_by by) {
  if (by == RPT_BY_FUNCTION) return r->p->frames[f].guid;
  uint32_t file = r->p->syms[f].file;
  return file == MP_NO_STRING ? 0 : (uint64_t)file + 1;
}

rpt_group *rpt_groups(rpt *r, rpt_by by, size_t *n_out) {
  const mp_profile *p = r->p;
  mp_map m; /* group key -> group */
  mp_map_init(&m, 1);
  rpt_group *g = NULL;
  size_t n = 0, gcap = 0;
  uint32_t *last = NULL; /* the context that last added to each group */
  for (size_t i = 0; i < r->n_ctx; i++) {
    const rpt_ctx *c = &r->ctx[i];
    const uint32_t *f = mp_stack_frames(p, c->stack);
    for (uint32_t k = 0; k < p->stacks[c->stack].len; k++) {
      uint32_t gi = mp_map_get_or_put(&m, group_key(r, f[k], by), (uint32_t)n);
      if (gi == MP_MAP_EMPTY) {
        MP_VEC_RESERVE(g, gcap, n + 1);
        last = mp_xrealloc(last, gcap * sizeof *last);
        const char *file = rpt_frame_file(r, f[k]);
        g[n] = (rpt_group){by == RPT_BY_FUNCTION ? rpt_frame_name(r, f[k])
                                                 : file ? file : "?",
                           0, 0, 0, 0, 0, 0, 0};
        last[n] = UINT32_MAX;
        gi = (uint32_t)n++;
      }
      if (last[gi] == i) continue; /* recursion: count a context once */
      last[gi] = (uint32_t)i;
      rpt_group *x = &g[gi];
      x->contexts++;
      x->allocs += c->mib->AllocCount;
      x->bytes += c->mib->TotalSize;
      x->lifetime += c->mib->TotalLifetime;
      x->accesses += c->mib->TotalAccessCount;
      x->density += c->mib->TotalLifetimeAccessDensity;
      if (c->verdict == RPT_COLD) x->bytes_cold += c->mib->TotalSize;
    }
  }
  free(last);
  mp_map_free(&m);
  rpt_key k = r->opts.sort;
  qsort_r(g, n, sizeof *g, cmp_group, &k);
  *n_out = n;
  return g;
}

/* ---- --base --------------------------------------------------------- */

static uint64_t stack_hash(const mp_profile *p, uint32_t s) {
  const uint32_t *f = mp_stack_frames(p, s);
  uint64_t h = p->stacks[s].len;
  for (uint32_t i = 0; i < p->stacks[s].len; i++) {
    const mp_frame *x = &p->frames[f[i]];
    h = mp_mix64(h ^ x->guid ^
                 mp_mix64((uint64_t)x->line_offset << 33 | (uint64_t)x->column << 1 |
                          x->is_inline));
  }
  return h;
}

static int same_stack(const mp_profile *a, uint32_t sa, const mp_profile *b,
                      uint32_t sb) {
  if (a->stacks[sa].len != b->stacks[sb].len) return 0;
  const uint32_t *fa = mp_stack_frames(a, sa), *fb = mp_stack_frames(b, sb);
  for (uint32_t i = 0; i < a->stacks[sa].len; i++) {
    const mp_frame *x = &a->frames[fa[i]], *y = &b->frames[fb[i]];
    if (x->guid != y->guid || x->line_offset != y->line_offset ||
        x->column != y->column || x->is_inline != y->is_inline)
      return 0;
  }
  return 1;
}

typedef struct base_ctx {
  const rpt *r, *base;
  uint32_t stack; /* in r */
} base_ctx;

static int same_base_stack(const void *ctx, uint32_t j, const void *ekey) {
  (void)ekey;
  const base_ctx *b = ctx;
  return same_stack(b->r->p, b->stack, b->base->p, b->base->ctx[j].stack);
}

void rpt_attach_base(rpt *r, rpt *base) {
  r->base = base;
  mp_map m; /* base's stacks (by contents) -> base context */
  mp_map_init(&m, 0);
  mp_map_reserve(&m, base->n_ctx);
  base_ctx b = {base, base, 0};
  for (size_t j = 0; j < base->n_ctx; j++) {
    b.stack = base->ctx[j].stack; /* base's stacks are distinct */
    uint64_t h = stack_hash(base->p, b.stack);
    mp_map_slot *s = mp_map_probe(&m, h, 0, same_base_stack, &b, NULL);
    mp_map_insert(&m, s, h, 0, (uint32_t)j);
  }
  b.r = r;
  for (size_t i = 0; i < r->n_ctx; i++) {
    b.stack = r->ctx[i].stack;
    uint64_t h = stack_hash(r->p, b.stack);
    uint32_t j = mp_map_probe(&m, h, 0, same_base_stack, &b, NULL)->val;
    if (j == MP_MAP_EMPTY) continue;
    r->ctx[i].base_match = j + 1;
    base->ctx[j].base_match = (uint32_t)i + 1;
  }
  mp_map_free(&m);
}
