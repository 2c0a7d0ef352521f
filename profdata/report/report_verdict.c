/* report_verdict.c - what clang-22 does with each context and allocation
 * call of a profile under -fmemory-profile-use, so that a report predicts
 * the optimized build.
 *
 * Per context: getAllocType (profdata/model/alloc_type.c).  Per allocation call (MemProfUse.cpp's
 * handleAllocSite and MemoryProfileInfo.cpp's CallStackTrie): the contexts
 * of the function's record whose first frame is the call's location are
 * deduplicated by (GUID, line offset, column) sequence (the larger total
 * size wins, a not-cold one on a tie), optionally hinted cold when cold
 * bytes dominate (-memprof-matching-cold-threshold), then put in a trie of
 * callers: one type for all gives the call a "memprof" attribute of that
 * type; otherwise (hot turned not-cold first) the trie is trimmed into
 * !memprof MIB nodes, not-cold ones pruned to those that disambiguate, and
 * the call gets "memprof"="ambiguous"; a trie that never splits into single
 * types gives "notcold".
 *
 * A call is what clang matches: the allocation's location with the
 * locations of the calls it was inlined through, up to the function that
 * holds it, so the prediction holds when the -fmemory-profile-use build
 * inlines as the profiled build did (clang then finds the contexts in that
 * function's record; an allocation inlined only in one of the two builds
 * is not matched by clang at all).  Nor is a call at a location that no
 * call clang compiles can have (RPT_UNMATCHED, see matchable): where the
 * profiled build merged code.
 */
#include <stdlib.h>
#include <string.h>

#include "common/hashmap.h"
#include "profdata/model/alloc_type.h"
#include "report.h"

/* The thresholds of getAllocType (alloc_type.h) among clang's options. */
static mp_alloc_thresholds thresholds(const rpt_clang_opts *o) {
  return (mp_alloc_thresholds){o->lifetime_access_density_cold,
                               o->ave_lifetime_cold,
                               o->min_ave_lifetime_density_hot,
                               o->use_hot_hints};
}

static int single_type(unsigned t) { return t && !(t & (t - 1)); }

static int same_loc(const mp_frame *a, const mp_frame *b) {
  return a->guid == b->guid && a->line_offset == b->line_offset &&
         a->column == b->column;
}

static uint64_t loc_hash(const mp_frame *f) {
  return mp_mix64(f->guid ^ mp_mix64((uint64_t)f->line_offset << 32 | f->column));
}

/* The call's inline stack: the context's frames up to its first physical
 * (not inlined) frame, whose function holds the call. */
static uint32_t call_depth(const mp_profile *p, uint32_t stack) {
  const uint32_t *f = mp_stack_frames(p, stack);
  uint32_t n = p->stacks[stack].len, k = 0;
  while (k + 1 < n && p->frames[f[k]].is_inline) k++;
  return k + 1;
}

/* The frames that make a call: its inline stack, or with `leaf_only` its
 * allocation frame alone (the call in a function nothing was inlined
 * into, as clang sees it when its pre-inliner left the allocation in
 * the function whose code has it). */
static uint32_t call_frames(const mp_profile *p, uint32_t stack, int leaf_only) {
  return leaf_only ? 1 : call_depth(p, stack);
}

/* ---- the caller trie ------------------------------------------------- */

typedef struct tnode {
  const mp_frame *loc;
  uint8_t types;
  uint64_t bytes; /* total size of the contexts ending here */
  uint32_t parent, first_child, next, n_children;
} tnode;

typedef struct mib_node {
  uint8_t type;
  uint32_t len;
} mib_node;

typedef struct sim {
  const rpt_clang_opts *o;
  tnode *nodes;
  size_t n_nodes, cap_nodes;
  mp_map children;   /* (parent, location) -> node, by contents */
  int has_columns;   /* some frame of the profile has a column */
  uint32_t want_parent;
  const mp_frame *want_loc;
  mib_node *mibs;
  size_t n_mibs, cap_mibs;
} sim;

#define NO_NODE UINT32_MAX

static uint32_t new_node(sim *s, uint32_t parent, const mp_frame *loc,
                         unsigned type) {
  MP_VEC_RESERVE(s->nodes, s->cap_nodes, s->n_nodes + 1);
  s->nodes[s->n_nodes] =
      (tnode){loc, (uint8_t)type, 0, parent, NO_NODE, NO_NODE, 0};
  return (uint32_t)s->n_nodes++;
}

static int is_wanted_child(const void *ctx, uint32_t node, const void *ekey) {
  (void)ekey;
  const sim *s = ctx;
  return s->nodes[node].parent == s->want_parent &&
         same_loc(s->nodes[node].loc, s->want_loc);
}

/* The child of `parent` at `loc`, added (of type `type`) if missing. */
static uint32_t child(sim *s, uint32_t parent, const mp_frame *loc,
                      unsigned type) {
  s->want_parent = parent;
  s->want_loc = loc;
  uint64_t h = mp_mix64(parent ^ loc_hash(loc));
  mp_map_slot *slot = mp_map_probe(&s->children, h, 0, is_wanted_child, s, NULL);
  if (slot->val != MP_MAP_EMPTY) {
    s->nodes[slot->val].types |= (uint8_t)type;
    return slot->val;
  }
  uint32_t c = new_node(s, parent, loc, type);
  mp_map_insert(&s->children, slot, h, 0, c);
  s->nodes[c].next = s->nodes[parent].first_child;
  s->nodes[parent].first_child = c;
  s->nodes[parent].n_children++;
  return c;
}

/* CallStackTrie::addCallStack: node 0 is the allocation. */
static void add_stack(sim *s, const mp_profile *p, uint32_t stack,
                      unsigned type, uint64_t bytes) {
  const uint32_t *f = mp_stack_frames(p, stack);
  uint32_t n = p->stacks[stack].len, cur = 0;
  s->nodes[0].types |= (uint8_t)type;
  for (uint32_t i = 1; i < n; i++) cur = child(s, cur, &p->frames[f[i]], type);
  s->nodes[cur].bytes += bytes;
}

static uint64_t subtree_bytes(const sim *s, uint32_t n) {
  uint64_t b = s->nodes[n].bytes;
  for (uint32_t c = s->nodes[n].first_child; c != NO_NODE; c = s->nodes[c].next)
    b += subtree_bytes(s, c);
  return b;
}

static void hot_to_notcold(sim *s) {
  for (size_t i = 0; i < s->n_nodes; i++)
    if (s->nodes[i].types & RPT_HOT)
      s->nodes[i].types = (uint8_t)((s->nodes[i].types & ~RPT_HOT) | RPT_NOTCOLD);
}

static void push_mib(sim *s, unsigned type, uint32_t len, uint64_t bytes,
                     uint64_t *total, uint64_t *cold) {
  MP_VEC_RESERVE(s->mibs, s->cap_mibs, s->n_mibs + 1);
  s->mibs[s->n_mibs++] = (mib_node){(uint8_t)type, len};
  *total += bytes;
  if (type == RPT_COLD) *cold += bytes;
}

/* saveFilteredNewMIBNodes over the MIB nodes from `mark` on: keep the cold
 * ones and only the not-cold ones that tell a longer context apart. */
static void save_filtered(sim *s, size_t mark, uint32_t caller_len,
                          uint64_t total, uint64_t cold) {
  const rpt_clang_opts *o = s->o;
  int mostly_cold = o->callsite_cold_percent < 100 && cold > 0 &&
                    cold * 100 >= (uint64_t)o->callsite_cold_percent * total;
  if (o->keep_all_not_cold && !mostly_cold) return;
  int longer = 0;
  for (size_t i = mark; i < s->n_mibs; i++)
    longer |= s->mibs[i].type != RPT_COLD && s->mibs[i].len > caller_len;
  int keep_first = !longer && !mostly_cold;
  size_t w = mark;
  for (size_t i = mark; i < s->n_mibs; i++) {
    int keep = s->mibs[i].type == RPT_COLD;
    if (!keep && !mostly_cold) {
      if (s->mibs[i].len > caller_len) {
        keep = 1;
      } else if (keep_first) {
        keep_first = 0;
        keep = 1;
      }
    }
    if (keep) s->mibs[w++] = s->mibs[i];
  }
  s->n_mibs = w;
}

/* CallStackTrie::buildMIBNodes; `depth` is the MIB call stack's length. */
static int build_mibs(sim *s, uint32_t n, uint32_t depth, int callee_amb,
                      uint64_t *total, uint64_t *cold) {
  const tnode *t = &s->nodes[n];
  if (single_type(t->types)) {
    push_mib(s, t->types, depth, subtree_bytes(s, n), total, cold);
    return 1;
  }
  if (t->n_children) {
    int amb = t->n_children > 1, all = 1;
    size_t mark = s->n_mibs;
    uint64_t ct = 0, cc = 0;
    for (uint32_t c = t->first_child; c != NO_NODE; c = s->nodes[c].next)
      all &= build_mibs(s, c, depth + 1, amb, &ct, &cc);
    save_filtered(s, mark, depth + 1, ct, cc);
    *total += ct;
    *cold += cc;
    if (all) return 1;
  }
  if (!callee_amb) return 0;
  push_mib(s, RPT_NOTCOLD, depth, subtree_bytes(s, n), total, cold);
  return 1;
}

/* ---- one allocation call ---------------------------------------------- */

static int same_stack_locs(const mp_profile *p, uint32_t a, uint32_t b) {
  if (p->stacks[a].len != p->stacks[b].len) return 0;
  const uint32_t *fa = mp_stack_frames(p, a), *fb = mp_stack_frames(p, b);
  for (uint32_t i = 0; i < p->stacks[a].len; i++)
    if (!same_loc(&p->frames[fa[i]], &p->frames[fb[i]])) return 0;
  return 1;
}

static uint64_t stack_loc_hash(const mp_profile *p, uint32_t stack) {
  const uint32_t *f = mp_stack_frames(p, stack);
  uint64_t h = p->stacks[stack].len;
  for (uint32_t i = 0; i < p->stacks[stack].len; i++)
    h = mp_mix64(h ^ loc_hash(&p->frames[f[i]]));
  return h;
}

/* handleAllocSite's deduplication: contexts equal but for IsInlineFrame
 * are one; keep the larger, or the not-cold one of equal size.  `idx`
 * holds the site's contexts in record order; returns how many remain. */
typedef struct dedup_ctx {
  const rpt *r;
  const uint32_t *idx;
  uint32_t stack;
} dedup_ctx;

static int same_kept_stack(const void *ctx, uint32_t k, const void *ekey) {
  (void)ekey;
  const dedup_ctx *d = ctx;
  return same_stack_locs(d->r->p, d->r->ctx[d->idx[k]].stack, d->stack);
}

static size_t dedup(const rpt *r, uint32_t *idx, size_t n) {
  mp_map kept; /* stack's locations -> index into idx, by contents */
  mp_map_init(&kept, 0);
  mp_map_reserve(&kept, n);
  dedup_ctx d = {r, idx, 0};
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    const rpt_ctx *c = &r->ctx[idx[i]];
    d.stack = c->stack;
    uint64_t h = stack_loc_hash(r->p, c->stack);
    mp_map_slot *s = mp_map_probe(&kept, h, 0, same_kept_stack, &d, NULL);
    if (s->val == MP_MAP_EMPTY) {
      idx[m] = idx[i];
      mp_map_insert(&kept, s, h, 0, (uint32_t)m++);
      continue;
    }
    uint32_t *k = &idx[s->val];
    uint64_t cur = r->ctx[*k].mib->TotalSize, add = c->mib->TotalSize;
    if (cur > add || (cur == add && c->verdict != RPT_NOTCOLD)) continue;
    *k = idx[i];
  }
  mp_map_free(&kept);
  return m;
}

static void decide_site(rpt *r, sim *s, rpt_site *site, uint32_t *idx,
                        size_t n);

/* One site's trie, decided and dropped. */
static void site_verdict(rpt *r, sim *s, rpt_site *site, uint32_t *idx,
                         size_t n) {
  mp_map_init(&s->children, 0);
  mp_map_reserve(&s->children, n);
  decide_site(r, s, site, idx, n);
  mp_map_free(&s->children);
}

/* Whether clang can find the call in its IR.  Its locations are line
 * offsets masked to 16 bits, so a frame with a larger offset (a line
 * before the function's first, mostly line 0) never matches; and when the
 * profile has columns clang compares them, and a call it compiles from
 * source has one, so a frame of column 0 (a location the profiled build
 * made up when it merged code) does not match either. */
static int matchable(const mp_profile *p, uint32_t stack, int has_columns) {
  const uint32_t *f = mp_stack_frames(p, stack);
  for (uint32_t i = 0; i < call_depth(p, stack); i++) {
    const mp_frame *x = &p->frames[f[i]];
    if (x->line_offset > 0xffff || (has_columns && x->column == 0)) return 0;
  }
  return 1;
}

static int profile_has_columns(const mp_profile *p) {
  for (size_t i = 0; i < p->n_frames; i++)
    if (p->frames[i].column) return 1;
  return 0;
}

static void decide_site(rpt *r, sim *s, rpt_site *site, uint32_t *idx,
                        size_t n) {
  if (r->ctx[site->first].in_library ||
      !matchable(r->p, r->ctx[site->first].stack, s->has_columns)) {
    site->attr = RPT_UNMATCHED;
    return;
  }
  n = dedup(r, idx, n);
  uint64_t total = 0, cold = 0;
  s->n_nodes = 0;
  s->n_mibs = 0;
  new_node(s, NO_NODE, &r->p->frames[site->frame], RPT_NONE);
  for (size_t i = 0; i < n; i++) {
    const rpt_ctx *c = &r->ctx[idx[i]];
    add_stack(s, r->p, c->stack, c->verdict, c->mib->TotalSize);
    total += c->mib->TotalSize;
    if (c->verdict == RPT_COLD) cold += c->mib->TotalSize;
  }
  unsigned pct = s->o->matching_cold_percent;
  if (cold < total && pct < 100 && cold * 100 >= (uint64_t)pct * total) {
    site->attr = RPT_COLD; /* "dominant" */
    return;
  }
  if (!single_type(s->nodes[0].types) && (s->nodes[0].types & RPT_HOT))
    hot_to_notcold(s);
  if (single_type(s->nodes[0].types)) {
    site->attr = s->nodes[0].types;
    return;
  }
  uint64_t t = 0, c = 0;
  if (!build_mibs(s, 0, 1, 0, &t, &c)) {
    site->attr = RPT_NOTCOLD; /* "indistinguishable" */
    return;
  }
  site->attr = RPT_AMBIGUOUS;
  for (size_t i = 0; i < s->n_mibs; i++) {
    if (s->mibs[i].type == RPT_COLD)
      site->mib_cold++;
    else
      site->mib_notcold++;
  }
}

/* ---- grouping contexts into calls ------------------------------------ */

static uint64_t call_hash(const mp_profile *p, uint32_t stack, int leaf_only) {
  const uint32_t *f = mp_stack_frames(p, stack);
  uint32_t n = call_frames(p, stack, leaf_only);
  uint64_t h = n;
  for (uint32_t i = 0; i < n; i++) h = mp_mix64(h ^ loc_hash(&p->frames[f[i]]));
  return h;
}

typedef struct site_ctx {
  const rpt *r;
  uint32_t stack;
  int leaf_only;
} site_ctx;

static int same_call(const void *ctx, uint32_t site, const void *ekey) {
  (void)ekey;
  const site_ctx *c = ctx;
  const mp_profile *p = c->r->p;
  uint32_t a = c->r->ctx[c->r->sites[site].first].stack, b = c->stack;
  uint32_t n = call_frames(p, a, c->leaf_only);
  if (n != call_frames(p, b, c->leaf_only)) return 0;
  const uint32_t *fa = mp_stack_frames(p, a), *fb = mp_stack_frames(p, b);
  for (uint32_t i = 0; i < n; i++)
    if (!same_loc(&p->frames[fa[i]], &p->frames[fb[i]])) return 0;
  return 1;
}

/* Site of every context: contexts whose inline stacks of the allocation
 * call (the call clang matches: its location and the locations of the
 * calls it was inlined through) are the same; with `leaf_only`, whose
 * allocation frames are. */
static void group_sites(rpt *r, int leaf_only) {
  const mp_profile *p = r->p;
  mp_map sites; /* the allocation call's inline stack -> site, by contents */
  mp_map_init(&sites, 0);
  size_t cap_sites = 0;
  for (size_t i = 0; i < r->n_ctx; i++) {
    site_ctx c = {r, r->ctx[i].stack, leaf_only};
    uint64_t h = call_hash(p, c.stack, leaf_only);
    mp_map_slot *s = mp_map_probe(&sites, h, 0, same_call, &c, NULL);
    if (s->val == MP_MAP_EMPTY) {
      MP_VEC_RESERVE(r->sites, cap_sites, r->n_sites + 1);
      uint32_t f0 = mp_stack_frames(p, c.stack)[0];
      r->sites[r->n_sites] = (rpt_site){f0, (uint32_t)i, RPT_NONE, 0, 0};
      r->ctx[i].site = (uint32_t)r->n_sites++;
      mp_map_insert(&sites, s, h, 0, r->ctx[i].site);
      continue;
    }
    r->ctx[i].site = s->val;
  }
  mp_map_free(&sites);
}

/* Every site's attribute and MIB nodes (r->sites grouped, verdicts set). */
static void decide_all(rpt *r) {
  /* contexts of each site, in context (record) order */
  uint32_t *start = mp_xcalloc(r->n_sites + 1, sizeof *start);
  for (size_t i = 0; i < r->n_ctx; i++) start[r->ctx[i].site + 1]++;
  for (size_t k = 0; k < r->n_sites; k++) start[k + 1] += start[k];
  uint32_t *fill = mp_xmalloc((r->n_sites + 1) * sizeof *fill);
  memcpy(fill, start, (r->n_sites + 1) * sizeof *fill);
  uint32_t *idx = mp_xmalloc((r->n_ctx + 1) * sizeof *idx);
  for (size_t i = 0; i < r->n_ctx; i++) idx[fill[r->ctx[i].site]++] = (uint32_t)i;
  sim s;
  memset(&s, 0, sizeof s);
  s.o = &r->opts.clang;
  s.has_columns = profile_has_columns(r->p);
  for (size_t k = 0; k < r->n_sites; k++)
    site_verdict(r, &s, &r->sites[k], idx + start[k], start[k + 1] - start[k]);
  free(s.nodes);
  free(s.mibs);
  free(idx);
  free(fill);
  free(start);
}

/* The calls clang would see had its pre-inliner inlined none of the
 * allocations: each in the function whose code has it, for the contexts
 * of all its callers (r->sum.leaf_*); and how many calls of the profiled
 * build's inlining are inlined allocations (r->sum.site_inlined).  The
 * sites and contexts are left as they were. */
static void decide_leaf_only(rpt *r) {
  rpt_summary *sum = &r->sum;
  for (size_t k = 0; k < r->n_sites; k++)
    sum->site_inlined += r->sites[k].attr != RPT_UNMATCHED &&
                         call_depth(r->p, r->ctx[r->sites[k].first].stack) > 1;
  rpt_site *sites = r->sites;
  size_t n_sites = r->n_sites;
  uint32_t *site_of = mp_xmalloc((r->n_ctx + 1) * sizeof *site_of);
  for (size_t i = 0; i < r->n_ctx; i++) site_of[i] = r->ctx[i].site;
  r->sites = NULL;
  r->n_sites = 0;
  group_sites(r, 1);
  decide_all(r);
  for (size_t k = 0; k < r->n_sites; k++) {
    unsigned a = r->sites[k].attr;
    sum->leaf_cold += a == RPT_COLD;
    sum->leaf_notcold += a == RPT_NOTCOLD;
    sum->leaf_hot += a == RPT_HOT;
    sum->leaf_ambiguous += a == RPT_AMBIGUOUS;
  }
  free(r->sites);
  r->sites = sites;
  r->n_sites = n_sites;
  for (size_t i = 0; i < r->n_ctx; i++) r->ctx[i].site = site_of[i];
  free(site_of);
}

void rpt_decide_sites(rpt *r) {
  const mp_alloc_thresholds t = thresholds(&r->opts.clang);
  for (size_t i = 0; i < r->n_ctx; i++) {
    const mpf_mib *m = r->ctx[i].mib;
    r->ctx[i].verdict = (uint8_t)mp_alloc_type(
        &t, m->TotalLifetimeAccessDensity, m->AllocCount, m->TotalLifetime);
  }
  group_sites(r, 0);
  decide_all(r);
  decide_leaf_only(r);
}
