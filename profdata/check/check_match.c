/* check_match.c - the binary's allocation calls matched to the profile's
 * contexts.
 *
 * Each allocation call is symbolized (symbolizer/: its inline frames,
 * innermost first) and keyed as the profile keys frames: the GUID of the
 * function's linkage name, the line's offset from the function's
 * DW_AT_decl_line, and the column; that is what clang compares when it
 * reads the profile.  A call serves a context when its frames equal the
 * first frames of the context's stack (the profile records no column as
 * 0, which matches any).
 *
 * With LTO, context disambiguation clones a function per context (and its
 * callers, as far as needed): then several hinted calls match one context
 * by their own frames, one in each clone.  The calls that serve the
 * context are those on its path: their function is called (or
 * tail-called) from a place whose frames equal the context's next frames,
 * from a function that is on the path in turn, up to the stack's end or a
 * function nothing calls directly; when none is, all of them are kept.
 */
#include <stdlib.h>
#include <string.h>

#include "check_priv.h"
#include "common/guid.h"

/* The length of `name` without the ".memprof.N" LTO gives a clone: the
 * clone keeps its original's GUID. */
static size_t unclone_len(const char *name) {
  size_t len = strlen(name), d = len;
  while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') d--;
  static const char sfx[] = ".memprof.";
  size_t k = sizeof sfx - 1;
  if (d < len && d > k && !memcmp(name + d - k, sfx, k)) return d - k;
  return len;
}

static chk_loc loc_of(const msym_frame *f) {
  return (chk_loc){mp_guid_of_name(f->name, unclone_len(f->name)),
                   f->line - f->decl_line, f->column};
}

static int loc_is(const chk_loc *l, const mp_frame *f) {
  return l->guid == f->guid && l->line_offset == f->line_offset &&
         (f->column == 0 || l->column == f->column);
}

int chk_locs_match(const mp_profile *p, uint32_t stack, uint32_t from,
                   const chk_loc *l, size_t n) {
  const uint32_t *f = mp_stack_frames(p, stack);
  if (from + n > p->stacks[stack].len) return 0;
  for (size_t i = 0; i < n; i++)
    if (!loc_is(&l[i], &p->frames[f[from + i]])) return 0;
  return 1;
}

/* Frames and locations of the code at addr; 0 frames without DWARF. */
static int symbolize(chk *c, uint64_t addr, const msym_frame **fr, size_t *n,
                     chk_loc **locs, mp_err *err) {
  const msym_module *m = msym_module_at(c->sym, 0);
  if (msym_symbolize(c->sym, m, addr, fr, n, err) != 0) return -1;
  *locs = *n ? mp_xmalloc(*n * sizeof **locs) : NULL;
  for (size_t i = 0; i < *n; i++) (*locs)[i] = loc_of(&(*fr)[i]);
  return 0;
}

static void push_key(chk_key **k, size_t *n, size_t *cap, const chk_loc *l,
                     size_t idx);
static int by_key(const void *a, const void *b);

static int symbolize_sites(chk *c, mp_err *err) {
  c->sites = mp_xcalloc(c->calls.n_alloc + 1, sizeof *c->sites);
  size_t cap = 0;
  for (size_t i = 0; i < c->calls.n_alloc; i++) {
    chk_site *s = &c->sites[c->n_sites];
    s->call = &c->calls.alloc[i];
    if (symbolize(c, s->call->addr, &s->frames, &s->n, &s->locs, err) != 0)
      return -1;
    if (!s->n) c->no_frames++;
    else push_key(&c->site_keys, &c->n_site_keys, &cap, &s->locs[0], c->n_sites);
    c->n_sites++;
  }
  qsort(c->site_keys, c->n_site_keys, sizeof *c->site_keys, by_key);
  return 0;
}

/* ---- lookups by innermost location ---------------------------------- */

static int by_key(const void *a, const void *b) {
  const chk_key *x = a, *y = b;
  if (x->guid != y->guid) return x->guid < y->guid ? -1 : 1;
  if (x->line_offset != y->line_offset)
    return x->line_offset < y->line_offset ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int key_before(const chk_key *k, uint64_t guid, uint32_t line) {
  return k->guid < guid || (k->guid == guid && k->line_offset < line);
}

void chk_keys_at(const chk_key *k, size_t n, const mp_frame *f, size_t *begin,
                 size_t *end) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (key_before(&k[mid], f->guid, f->line_offset)) lo = mid + 1;
    else hi = mid;
  }
  *begin = *end = lo;
  while (*end < n && k[*end].guid == f->guid &&
         k[*end].line_offset == f->line_offset)
    ++*end;
}

static void push_key(chk_key **k, size_t *n, size_t *cap, const chk_loc *l,
                     size_t idx) {
  MP_VEC_RESERVE(*k, *cap, *n + 1);
  (*k)[(*n)++] = (chk_key){l->guid, l->line_offset, (uint32_t)idx};
}

/* Every edge call symbolized once, keyed by its innermost location. */
static void index_edges(chk *c) {
  size_t n = c->calls.n_edge, cap = 0;
  c->edge_locs = mp_xcalloc(n + 1, sizeof *c->edge_locs);
  c->edge_n = mp_xcalloc(n + 1, sizeof *c->edge_n);
  c->edge_keys = mp_xmalloc(sizeof *c->edge_keys);
  for (size_t i = 0; i < n; i++) {
    const msym_frame *fr;
    mp_err err;
    if (symbolize(c, c->calls.edge[i].addr, &fr, &c->edge_n[i],
                  &c->edge_locs[i], &err) != 0)
      c->edge_n[i] = 0;
    if (c->edge_n[i])
      push_key(&c->edge_keys, &c->n_edge_keys, &cap, &c->edge_locs[i][0], i);
  }
  qsort(c->edge_keys, c->n_edge_keys, sizeof *c->edge_keys, by_key);
}

static int on_path(chk *c, uint64_t func, uint32_t stack, uint32_t from,
                   int depth);

/* A call of `func` (any when 0) at the stack's frames from `from` on; with
 * depth >= 0, also with its own function on the stack's path (on_path). */
static const chk_call *find_call(chk *c, uint64_t func, uint32_t stack,
                                 uint32_t from, int depth) {
  const mp_profile *p = c->r->p;
  if (from >= p->stacks[stack].len) return NULL;
  if (!c->edge_locs) index_edges(c);
  size_t b, e;
  chk_keys_at(c->edge_keys, c->n_edge_keys,
              &p->frames[mp_stack_frames(p, stack)[from]], &b, &e);
  for (size_t k = b; k < e; k++) {
    size_t i = c->edge_keys[k].idx;
    const chk_call *call = &c->calls.edge[i];
    if ((func && call->target != func) ||
        !chk_locs_match(p, stack, from, c->edge_locs[i], c->edge_n[i]))
      continue;
    if (depth >= 0 &&
        !on_path(c, call->func, stack, from + (uint32_t)c->edge_n[i], depth))
      continue;
    return call;
  }
  return NULL;
}

const chk_call *chk_call_at(chk *c, uint64_t func, uint32_t stack,
                            uint32_t from) {
  return find_call(c, func, stack, from, -1);
}

static void add_site(chk_ctx *x, uint32_t s) {
  x->sites = mp_xrealloc(x->sites, (x->n_sites + 1) * sizeof *x->sites);
  x->sites[x->n_sites++] = s;
}

static int by_u64(const void *a, const void *b);

/* Whether some direct call or tail jump goes to `func`. */
static int is_called(chk *c, uint64_t func) {
  if (!c->edge_targets) {
    c->edge_targets = mp_xmalloc((c->calls.n_edge + 1) * sizeof *c->edge_targets);
    for (size_t i = 0; i < c->calls.n_edge; i++)
      c->edge_targets[i] = c->calls.edge[i].target;
    qsort(c->edge_targets, c->calls.n_edge, sizeof *c->edge_targets, by_u64);
  }
  size_t lo = 0, hi = c->calls.n_edge;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->edge_targets[mid] < func) lo = mid + 1;
    else hi = mid;
  }
  return lo < c->calls.n_edge && c->edge_targets[lo] == func;
}

/* Whether code in function `func`, at the stack's frames before `from`,
 * can be on the stack's path: some call of func sits at the frames from
 * `from` on and its own function can be (up to the stack's end, or
 * `depth` functions up), or nothing calls func directly (an entry point,
 * or called through a pointer: the calls say nothing). */
static int on_path(chk *c, uint64_t func, uint32_t stack, uint32_t from,
                   int depth) {
  if (!func || from >= c->r->p->stacks[stack].len || depth == 0) return 1;
  if (!is_called(c, func)) return 1;
  return find_call(c, func, stack, from, depth - 1) != NULL;
}

/* How many callers up on_path follows LTO's clones. */
#define PATH_DEPTH 16

/* The hinted calls serving context i. */
static void match_context(chk *c, size_t i) {
  const rpt_ctx *rc = &c->r->ctx[i];
  chk_ctx *x = &c->ctx[i];
  uint64_t first_func = 0;
  int several_funcs = 0;
  size_t b, e;
  chk_keys_at(c->site_keys, c->n_site_keys,
              &c->r->p->frames[mp_stack_frames(c->r->p, rc->stack)[0]], &b, &e);
  for (size_t kk = b; kk < e; kk++) {
    size_t k = c->site_keys[kk].idx;
    const chk_site *s = &c->sites[k];
    if (s->call->kind != CHK_HINTED || !s->n ||
        !chk_locs_match(c->r->p, rc->stack, 0, s->locs, s->n))
      continue;
    if (x->n_sites && s->call->func != first_func) several_funcs = 1;
    if (!x->n_sites) first_func = s->call->func;
    add_site(x, (uint32_t)k);
  }
  if (!several_funcs) return;
  /* clones: keep the calls in functions on the context's path */
  size_t kept = 0;
  for (size_t j = 0; j < x->n_sites; j++) {
    const chk_site *s = &c->sites[x->sites[j]];
    if (on_path(c, s->call->func, rc->stack, (uint32_t)s->n, PATH_DEPTH))
      x->sites[kept++] = x->sites[j];
  }
  if (kept) x->n_sites = kept;
}

static int by_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* GUIDs of the binary's function symbols (and of the functions its
 * allocation calls were inlined from), for "not in the binary"; and how
 * many of those symbols are LTO clones, for the reasons' wording. */
static void collect_guids(chk *c) {
  size_t n = c->elf.n_syms;
  for (size_t i = 0; i < c->n_sites; i++) n += c->sites[i].n;
  c->guids = mp_xmalloc((n + 1) * sizeof *c->guids);
  for (size_t i = 0; i < c->elf.n_syms; i++) {
    const char *name = c->elf.syms[i].name;
    size_t len = unclone_len(name);
    if (name[len]) c->lto_clones++;
    c->guids[c->n_guids++] = mp_guid_of_name(name, len);
  }
  for (size_t i = 0; i < c->n_sites; i++)
    for (size_t k = 0; k < c->sites[i].n; k++)
      c->guids[c->n_guids++] = c->sites[i].locs[k].guid;
  qsort(c->guids, c->n_guids, sizeof *c->guids, by_u64);
}

/* How many innermost frames of site s equal the first frames of context
 * i's stack. */
static uint32_t frames_shared(const chk *c, const chk_site *s, size_t i) {
  const mp_profile *p = c->r->p;
  const uint32_t *f = mp_stack_frames(p, c->r->ctx[i].stack);
  uint32_t len = p->stacks[c->r->ctx[i].stack].len, k = 0;
  while (k < s->n && k < len && loc_is(&s->locs[k], &p->frames[f[k]])) k++;
  return k;
}

/* The hinted calls no context serves that lie on a path no context
 * reached: their innermost frames are some context's first ones (the
 * most of them, the first such context). */
static void find_off_path(chk *c) {
  for (size_t j = 0; j < c->n_sites; j++) {
    chk_site *s = &c->sites[j];
    if (s->call->kind != CHK_HINTED || s->n_ctx || !s->n) continue;
    for (size_t i = 0; i < c->r->n_ctx; i++) {
      uint32_t k = frames_shared(c, s, i);
      if (k > s->helper_frames) {
        s->helper_frames = k;
        s->helper_ctx = (uint32_t)i;
      }
    }
  }
}

int chk_match(chk *c, mp_err *err) {
  if (symbolize_sites(c, err) != 0) return -1;
  collect_guids(c);
  c->ctx = mp_xcalloc(c->r->n_ctx + 1, sizeof *c->ctx);
  for (size_t i = 0; i < c->r->n_ctx; i++) {
    match_context(c, i);
    chk_ctx *x = &c->ctx[i];
    for (size_t j = 0; j < x->n_sites; j++) {
      chk_site *s = &c->sites[x->sites[j]];
      s->n_ctx++;
      if (s->call->value != CHK_NO_VALUE && s->call->value < 128)
        x->cold_hint = 1;
    }
    chk_decide_reason(c, i);
  }
  find_off_path(c);
  return 0;
}
