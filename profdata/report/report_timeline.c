/* report_timeline.c - timelines (timeline.h) joined to the report's
 * contexts: the live bytes and blocks each context had at its process's
 * peak, at exit and at every census.
 *
 * A timeline names contexts by the raw profile's stack ids.  Several ids
 * may become one context (PCs that symbolize to the same frames), so
 * values are summed per context; ids whose stack has no symbolizable
 * frame have no context and are summed under RPT_TIMELINE_NO_FRAMES (but
 * libstdc++'s exception pool, RPT_TIMELINE_EH_POOL: report_pool.c).  An id the
 * raw profile does not have means the timeline belongs to another run,
 * and the whole timeline is refused.
 *
 * Merged processes (docs/memprof-profdata.md): each keeps its own peak
 * (peaks of different processes are not simultaneous, so they are not
 * added), while live-at-exit is summed over the processes.
 *
 * Times: a process's clock (the raw profile's AllocTimestamp's, as LLVM's
 * runtime counts) starts at the whole second the runtime started in; the
 * timeline records the process's start on it (StartMs), and the reports
 * give times from there (rpt_timeline_since).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdata/raw/raw.h"
#include "report.h"

/* What a join works with: stack id -> context, and per context the
 * running sums of the list being joined. */
typedef struct joiner {
  mp_map ids;        /* raw stack id -> its slot: context index, n_ctx
                        for no frames, n_ctx + 1 for the exception pool
                        (UINT32_MAX is the map's "absent") */
  uint64_t *bytes, *blocks; /* per slot */
  uint8_t *seen;     /* per slot: in touched */
  uint32_t *touched; /* slots with a value, in first-seen order */
  size_t n_touched;
  size_t n_ctx;
} joiner;

#define N_PSEUDO 2 /* slots after the contexts: no frames, the pool */

static uint32_t slot_of(const joiner *j, uint32_t ctx) {
  return ctx == RPT_TIMELINE_NO_FRAMES ? (uint32_t)j->n_ctx
         : ctx == RPT_TIMELINE_EH_POOL ? (uint32_t)j->n_ctx + 1
                                       : ctx;
}

static uint32_t ctx_of(const joiner *j, uint32_t slot) {
  return slot == j->n_ctx ? RPT_TIMELINE_NO_FRAMES
         : slot == j->n_ctx + 1 ? RPT_TIMELINE_EH_POOL
                                : slot;
}

/* The raw profile's first stack id, when its stack has no frame and it is
 * the exception pool by what the timeline holds of it at exit. */
static int unnamed_pool(const rpt_timeline_input *in, const mp_timeline *t,
                        size_t i, uint64_t first) {
  if (in->stacks[i] != MP_RAW_NO_FRAMES) return 0;
  for (size_t k = 0; k < t->n_at_exit; k++)
    if (t->at_exit[k].stack_id == in->ids[i])
      return rpt_eh_pool_unnamed(in->ids[i], first, t->at_exit[k].bytes,
                                 t->at_exit[k].blocks);
  return 0;
}

void rpt_stack_id_map(const rpt *r, const uint64_t *ids, const uint32_t *stacks, size_t n,
                      mp_map *out) {
  uint32_t *stack_ctx = mp_xmalloc((r->p->n_stacks + 1) * sizeof *stack_ctx);
  memset(stack_ctx, 0xff, (r->p->n_stacks + 1) * sizeof *stack_ctx);
  for (size_t i = 0; i < r->n_ctx; i++) stack_ctx[r->ctx[i].stack] = (uint32_t)i;
  mp_map_init(out, 1);
  mp_map_reserve(out, n);
  for (size_t i = 0; i < n; i++) {
    uint32_t s = stacks[i];
    mp_map_put(out, ids[i],
               s == MP_RAW_NO_FRAMES || s >= r->p->n_stacks || stack_ctx[s] == UINT32_MAX
                   ? (uint32_t)r->n_ctx
                   : stack_ctx[s]);
  }
  free(stack_ctx);
}

/* The stack ids' slots, with the exception pool's own (its stack has no
 * frame when libstdc++ has no symbols: unnamed_pool). */
static void joiner_init(joiner *j, const rpt *r, const rpt_timeline_input *in,
                        const mp_timeline *t) {
  rpt_stack_id_map(r, in->ids, in->stacks, in->n, &j->ids);
  uint64_t first = UINT64_MAX;
  for (size_t i = 0; i < in->n; i++)
    if (in->ids[i] < first) first = in->ids[i];
  for (size_t i = 0; i < in->n; i++)
    if (unnamed_pool(in, t, i, first))
      mp_map_put(&j->ids, in->ids[i], (uint32_t)r->n_ctx + 1);
  j->n_ctx = r->n_ctx;
  j->bytes = mp_xcalloc(r->n_ctx + N_PSEUDO, sizeof *j->bytes);
  j->blocks = mp_xcalloc(r->n_ctx + N_PSEUDO, sizeof *j->blocks);
  j->seen = mp_xcalloc(r->n_ctx + N_PSEUDO, 1);
  j->touched = mp_xmalloc((r->n_ctx + N_PSEUDO) * sizeof *j->touched);
  j->n_touched = 0;
}

static void joiner_free(joiner *j) {
  mp_map_free(&j->ids);
  free(j->bytes);
  free(j->blocks);
  free(j->seen);
  free(j->touched);
}

static int cmp_val(const void *a, const void *b) {
  const rpt_timeline_val *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  if (x->blocks != y->blocks) return x->blocks > y->blocks ? -1 : 1;
  return x->ctx < y->ctx ? -1 : x->ctx > y->ctx;
}

/* Adds one value to the running sums. */
static void add_value(joiner *j, uint32_t ctx, uint64_t bytes, uint64_t blocks) {
  uint32_t s = slot_of(j, ctx);
  if (!j->seen[s]) j->touched[j->n_touched++] = s;
  j->seen[s] = 1;
  j->bytes[s] += bytes;
  j->blocks[s] += blocks;
}

/* The running sums as a list, largest first; the sums are reset. */
static rpt_timeline_val *take_values(joiner *j, size_t *n) {
  rpt_timeline_val *v = mp_xmalloc((j->n_touched + 1) * sizeof *v);
  for (size_t i = 0; i < j->n_touched; i++) {
    uint32_t s = j->touched[i];
    v[i] = (rpt_timeline_val){ctx_of(j, s), j->bytes[s], j->blocks[s]};
    j->bytes[s] = j->blocks[s] = 0;
    j->seen[s] = 0;
  }
  *n = j->n_touched;
  j->n_touched = 0;
  qsort(v, *n, sizeof *v, cmp_val);
  return v;
}

/* Sums one list of the timeline into the joiner; fails on an unknown id. */
static int join_list(joiner *j, const rpt_timeline_input *in, const mp_timeline_live *l,
                     size_t n, const char *what, mp_err *err) {
  for (size_t i = 0; i < n; i++) {
    uint32_t v = mp_map_get(&j->ids, l[i].stack_id);
    if (v == MP_MAP_EMPTY)
      return mp_fail(err,
                     "stack id 0x%016" PRIx64 " (%s) is not in the raw profile "
                     "%s: the timeline belongs to another run",
                     l[i].stack_id, what, in->raw);
    add_value(j, ctx_of(j, v), l[i].bytes, l[i].blocks);
  }
  return 0;
}

static void free_proc(rpt_timeline_proc *p) {
  if (p->census)
    for (size_t i = 0; i < p->tl.n_census; i++) free(p->census[i].v);
  free(p->census);
  free(p->at_peak);
  free(p->at_exit);
  free(p->path);
  mp_timeline_free(&p->tl);
}

/* Joins everything of one process. */
static int join_proc(joiner *j, rpt_timeline_input *in, rpt_timeline_proc *p, mp_err *err) {
  const mp_timeline *t = &p->tl;
  if (join_list(j, in, t->at_peak, t->n_at_peak, "live at the peak", err) != 0)
    return -1;
  p->at_peak = take_values(j, &p->n_at_peak);
  p->census = mp_xcalloc(t->n_census + 1, sizeof *p->census);
  for (size_t c = 0; c < t->n_census; c++) {
    char what[48];
    snprintf(what, sizeof what, "census %zu", c);
    if (join_list(j, in, t->census[c].ctx, t->census[c].n_ctx, what, err) != 0)
      return -1;
    p->census[c].c = &t->census[c];
    p->census[c].v = take_values(j, &p->census[c].n);
  }
  if (join_list(j, in, t->at_exit, t->n_at_exit, "live at exit", err) != 0)
    return -1;
  p->at_exit = take_values(j, &p->n_at_exit);
  return 0;
}

/* Live at exit over all processes so far plus p. */
static void add_exit(joiner *j, rpt_timeline *tl, const rpt_timeline_proc *p) {
  for (size_t i = 0; i < tl->n_at_exit; i++)
    add_value(j, tl->at_exit[i].ctx, tl->at_exit[i].bytes, tl->at_exit[i].blocks);
  for (size_t i = 0; i < p->n_at_exit; i++)
    add_value(j, p->at_exit[i].ctx, p->at_exit[i].bytes, p->at_exit[i].blocks);
  free(tl->at_exit);
  tl->at_exit = take_values(j, &tl->n_at_exit);
}

uint64_t rpt_timeline_since(const rpt_timeline_proc *p, uint64_t t_ms) {
  if (p->start_ms < 0) return t_ms + (uint64_t)-p->start_ms;
  return t_ms > (uint64_t)p->start_ms ? t_ms - (uint64_t)p->start_ms : 0;
}

int rpt_timeline_add(rpt *r, rpt_timeline_input *in, mp_err *err) {
  rpt_timeline_proc p = {0};
  p.tl = in->tl;
  memset(&in->tl, 0, sizeof in->tl);
  p.path = mp_xstrndup(in->path, strlen(in->path));
  joiner j;
  joiner_init(&j, r, in, &p.tl);
  if (join_proc(&j, in, &p, err) != 0) {
    joiner_free(&j);
    free_proc(&p);
    return -1;
  }
  if (!r->tl) r->tl = mp_xcalloc(1, sizeof *r->tl);
  rpt_timeline *tl = r->tl;
  add_exit(&j, tl, &p);
  joiner_free(&j);
  p.start_ms = p.tl.start_ms;
  tl->exit_bytes += p.tl.exit_bytes;
  tl->exit_blocks += p.tl.exit_blocks;
  for (size_t i = 0; i < p.n_at_exit; i++) {
    if (!rpt_timeline_is_pool(r, p.at_exit[i].ctx)) continue;
    tl->pool_exit_bytes += p.at_exit[i].bytes;
    tl->pool_exit_blocks += p.at_exit[i].blocks;
    if (p.at_exit[i].ctx != RPT_TIMELINE_EH_POOL) continue;
    tl->pool_unnamed_bytes += p.at_exit[i].bytes;
    tl->pool_unnamed_blocks += p.at_exit[i].blocks;
  }
  tl->proc = mp_xrealloc(tl->proc, (tl->n_proc + 1) * sizeof *tl->proc);
  tl->proc[tl->n_proc++] = p;
  return 0;
}

void rpt_timeline_free(rpt_timeline *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n_proc; i++) free_proc(&t->proc[i]);
  free(t->proc);
  free(t->at_exit);
  free(t);
}

/* The slot of a graph candidate: its context, or one after the contexts. */
static size_t most_slot(const rpt *r, uint32_t ctx) {
  return ctx == RPT_TIMELINE_NO_FRAMES ? r->n_ctx
         : ctx == RPT_TIMELINE_EH_POOL ? r->n_ctx + 1
                                       : ctx;
}

static int cmp_most(const void *a, const void *b, void *arg) {
  const rpt *r = ((void **)arg)[0];
  const uint64_t *most = ((void **)arg)[1];
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  uint64_t mx = most[most_slot(r, x)], my = most[most_slot(r, y)];
  if (mx != my) return mx > my ? -1 : 1;
  return x < y ? -1 : x > y;
}

int rpt_timeline_is_pool(const rpt *r, uint32_t ctx) {
  return ctx == RPT_TIMELINE_EH_POOL || (ctx < r->n_ctx && r->ctx[ctx].eh_pool);
}

static void note_most(const rpt *r, uint64_t *most, const rpt_timeline_val *v,
                      size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t s = most_slot(r, v[i].ctx);
    if (v[i].bytes > most[s]) most[s] = v[i].bytes;
  }
}

uint32_t *rpt_timeline_graph_contexts(const rpt *r, size_t max, size_t *n) {
  uint64_t *most = mp_xcalloc(r->n_ctx + 2, sizeof *most);
  for (size_t k = 0; r->tl && k < r->tl->n_proc; k++) {
    const rpt_timeline_proc *p = &r->tl->proc[k];
    for (size_t c = 0; c < p->tl.n_census; c++)
      note_most(r, most, p->census[c].v, p->census[c].n);
    note_most(r, most, p->at_peak, p->n_at_peak);
    note_most(r, most, p->at_exit, p->n_at_exit);
  }
  uint32_t *o = mp_xmalloc((r->n_ctx + 2) * sizeof *o);
  size_t k = 0;
  for (size_t i = 0; i < r->n_ctx + 2; i++)
    if (most[i])
      o[k++] = i == r->n_ctx       ? RPT_TIMELINE_NO_FRAMES
               : i == r->n_ctx + 1 ? RPT_TIMELINE_EH_POOL
                                   : (uint32_t)i;
  void *arg[2] = {(void *)r, most};
  qsort_r(o, k, sizeof *o, cmp_most, arg);
  free(most);
  *n = k < max ? k : max;
  return o;
}
