/* report_roots.c - who holds the memory: the censuses of a `.roots` file
 * (profdata/roots/roots.h, MEMPROF_OPTIONS=roots=1) joined to the report's
 * contexts, and their part of the text report: per census the roots that
 * retain the most bytes, each with the contexts it retains; the sets of
 * roots that share the most (the bands); at exit the blocks no root
 * reaches (leaked) apart from those still reachable.  The other formats
 * read the censuses through the accessors of report.h
 * (report_roots_json.c, report_pprof.c, report_dhat.c).
 *
 * The file names contexts by the raw profile's stack ids; several ids may
 * be one context (PCs that symbolize alike) and are summed; an id whose
 * stack has no symbolizable frame is shown as such.  An id the raw
 * profile does not have means the file belongs to another run, and it is
 * refused whole.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define ROOT_CONTEXTS 5 /* contexts shown under each root */

typedef struct rpt_roots_proc {
  char *path;
  mp_roots rs;
  mp_map ids; /* raw stack id -> context index, n_ctx: no frames */
} rpt_roots_proc;

struct rpt_roots {
  rpt_roots_proc *proc;
  size_t n_proc;
};

static int check_ids(const mp_map *ids, const mp_roots_ctx *v, size_t n, const char *raw,
                     mp_err *err) {
  for (size_t i = 0; i < n; i++)
    if (mp_map_get(ids, v[i].stack_id) == MP_MAP_EMPTY)
      return mp_fail(err,
                     "stack id 0x%016" PRIx64 " is not in the raw profile %s: the "
                     "roots file belongs to another run",
                     v[i].stack_id, raw);
  return 0;
}

int rpt_roots_add(rpt *r, rpt_roots_input *in, mp_err *err) {
  mp_map ids;
  rpt_stack_id_map(r, in->ids, in->stacks, in->n, &ids);
  for (size_t i = 0; i < in->rs.n_census; i++) {
    const mp_roots_census *c = &in->rs.census[i];
    int bad = check_ids(&ids, c->shared, c->n_shared, in->raw, err) ||
              check_ids(&ids, c->unreached, c->n_unreached, in->raw, err);
    for (size_t k = 0; !bad && k < c->n_roots; k++)
      bad = check_ids(&ids, c->roots[k].ctx, c->roots[k].n_ctx, in->raw, err);
    if (bad) {
      mp_map_free(&ids);
      mp_roots_free(&in->rs);
      return -1;
    }
  }
  if (!r->roots) r->roots = mp_xcalloc(1, sizeof *r->roots);
  rpt_roots *t = r->roots;
  t->proc = mp_xrealloc(t->proc, (t->n_proc + 1) * sizeof *t->proc);
  t->proc[t->n_proc++] = (rpt_roots_proc){mp_xstrndup(in->path, strlen(in->path)), in->rs, ids};
  memset(&in->rs, 0, sizeof in->rs);
  return 0;
}

void rpt_roots_free(rpt_roots *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n_proc; i++) {
    free(t->proc[i].path);
    mp_roots_free(&t->proc[i].rs);
    mp_map_free(&t->proc[i].ids);
  }
  free(t->proc);
  free(t);
}

/* ---- for the other formats (report.h) ------------------------------------- */

size_t rpt_roots_n_proc(const rpt *r) { return r->roots ? r->roots->n_proc : 0; }

const mp_roots *rpt_roots_file(const rpt *r, size_t k, const char **path) {
  if (path) *path = r->roots->proc[k].path;
  return &r->roots->proc[k].rs;
}

/* ---- text ----------------------------------------------------------------- */

typedef struct val {
  uint32_t ctx; /* n_ctx: no symbolizable frame */
  uint64_t bytes, blocks, direct_bytes, direct_blocks;
  uint64_t shared_bytes; /* of bytes, those several roots reach */
} val;

static int by_bytes(const void *a, const void *b) {
  const val *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return x->ctx < y->ctx ? -1 : x->ctx > y->ctx;
}

/* Adds lists of the census into per-context sums (`acc`, n_ctx + 1), and
 * returns them as a list, largest first; acc is left zero.  `shared`:
 * the list of blocks several roots reach. */
static void add_list_of(const rpt_roots_proc *p, val *acc, const mp_roots_ctx *v, size_t n,
                        int shared) {
  for (size_t i = 0; i < n; i++) {
    val *a = &acc[mp_map_get(&p->ids, v[i].stack_id)];
    a->bytes += v[i].bytes;
    if (shared) a->shared_bytes += v[i].bytes;
    a->blocks += v[i].blocks;
    a->direct_bytes += v[i].direct_bytes;
    a->direct_blocks += v[i].direct_blocks;
  }
}

static void add_list(const rpt_roots_proc *p, val *acc, const mp_roots_ctx *v, size_t n) {
  add_list_of(p, acc, v, n, 0);
}

static val *take(val *acc, size_t n_slots, size_t *n) {
  val *out = mp_xmalloc((n_slots + 1) * sizeof *out);
  *n = 0;
  for (size_t s = 0; s < n_slots; s++)
    if (acc[s].blocks) {
      out[*n] = acc[s];
      out[(*n)++].ctx = (uint32_t)s;
      memset(&acc[s], 0, sizeof acc[s]);
    }
  qsort(out, *n, sizeof *out, by_bytes);
  return out;
}

static void print_ctx(rpt *r, mp_buf *o, const char *prefix, uint32_t ctx) {
  if (ctx >= r->n_ctx)
    mp_buf_printf(o, "%s      (stacks without a symbolizable frame)\n", prefix);
  else
    rpt_print_stack(r, o, r->ctx[ctx].stack, prefix);
}

/* What a context row says besides its bytes and blocks. */
enum { ROW_PLAIN, ROW_DIRECT, ROW_SHARED };

/* Rows of contexts (at most `max`, 0: all): bytes, blocks, and with
 * ROW_DIRECT the direct bytes, with ROW_SHARED the bytes retained by one
 * root and those shared. */
static void ctx_rows(rpt *r, mp_buf *o, const char *prefix, const val *v, size_t n_v,
                     size_t max, int extra) {
  size_t n = max && max < n_v ? max : n_v;
  for (size_t i = 0; i < n; i++) {
    mp_buf_printf(o, "%s    %" PRIu64 " byte%s in %" PRIu64 " block%s", prefix, v[i].bytes,
                  v[i].bytes == 1 ? "" : "s", v[i].blocks, v[i].blocks == 1 ? "" : "s");
    if (extra == ROW_DIRECT)
      mp_buf_printf(o, " (%" PRIu64 " direct)", v[i].direct_bytes);
    if (extra == ROW_SHARED)
      mp_buf_printf(o, " (%" PRIu64 " retained by one root, %" PRIu64 " shared)",
                    v[i].bytes - v[i].shared_bytes, v[i].shared_bytes);
    mp_buf_u8(o, '\n');
    print_ctx(r, o, prefix, v[i].ctx);
  }
  if (n < n_v) mp_buf_printf(o, "%s    ... %zu more contexts\n", prefix, n_v - n);
}

static int by_retained(const void *a, const void *b, void *arg) {
  const mp_roots_root *roots = arg;
  const mp_roots_root *x = &roots[*(const size_t *)a], *y = &roots[*(const size_t *)b];
  if (x->retained_bytes != y->retained_bytes)
    return x->retained_bytes > y->retained_bytes ? -1 : 1;
  if (x->reached_bytes != y->reached_bytes) return x->reached_bytes > y->reached_bytes ? -1 : 1;
  return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void roots_table(rpt *r, mp_buf *o, const char *prefix, const rpt_roots_proc *p,
                        const mp_roots_census *c, val *acc) {
  size_t *ord = mp_xmalloc((c->n_roots + 1) * sizeof *ord), n = 0;
  for (size_t k = 0; k < c->n_roots; k++)
    if (c->roots[k].reached_blocks) ord[n++] = k;
  qsort_r(ord, n, sizeof *ord, by_retained, c->roots);
  size_t top = r->opts.top && r->opts.top < n ? r->opts.top : n;
  mp_buf_printf(o, "%s  %4s %14s %8s %14s %8s  %s\n", prefix, "#", "retained", "blocks",
                "reached", "blocks", "root");
  for (size_t i = 0; i < top; i++) {
    const mp_roots_root *x = &c->roots[ord[i]];
    char label[600];
    mp_roots_label(c, x, label, sizeof label);
    mp_buf_printf(o, "%s  %4zu %14" PRIu64 " %8" PRIu64 " %14" PRIu64 "%s %8" PRIu64
                     "  %s\n",
                  prefix, i + 1, x->retained_bytes, x->retained_blocks, x->reached_bytes,
                  x->flags & MP_ROOT_REACHED_PARTIAL ? "?" : " ", x->reached_blocks, label);
    add_list(p, acc, x->ctx, x->n_ctx);
    size_t nv;
    val *v = take(acc, r->n_ctx + 1, &nv);
    ctx_rows(r, o, prefix, v, nv, ROOT_CONTEXTS, ROW_PLAIN);
    free(v);
  }
  if (top < n) mp_buf_printf(o, "%s  ... %zu more roots\n", prefix, n - top);
  free(ord);
}

/* The bands (version 3): each set of roots sharing blocks as
 * "a + b + c: BYTES bytes in BLOCKS blocks", largest first (the file's
 * order), at most opts.top, then the other shared blocks. */
static void bands_text(rpt *r, mp_buf *o, const char *prefix, const mp_roots_census *c) {
  mp_buf_printf(o, "%s\n%sShared by sets of roots (bands: blocks those roots reach and no "
                   "other):\n", prefix, prefix);
  size_t top = r->opts.top && r->opts.top < c->n_bands ? r->opts.top : c->n_bands;
  uint64_t other[2] = {c->other_bytes, c->other_blocks};
  for (size_t i = 0; i < c->n_bands; i++) {
    const mp_roots_band *b = &c->bands[i];
    if (i >= top) {
      other[0] += b->bytes, other[1] += b->blocks;
      continue;
    }
    mp_buf_printf(o, "%s    ", prefix);
    for (size_t j = 0; j < b->n_roots; j++) {
      char label[600];
      mp_roots_label(c, &c->roots[b->roots[j]], label, sizeof label);
      mp_buf_printf(o, "%s%s", j ? " + " : "", label);
    }
    mp_buf_printf(o, ": %" PRIu64 " byte%s in %" PRIu64 " block%s\n", b->bytes,
                  b->bytes == 1 ? "" : "s", b->blocks, b->blocks == 1 ? "" : "s");
  }
  if (!c->n_bands && !other[1])
    mp_buf_printf(o, "%s    nothing\n", prefix);
  if (other[1])
    mp_buf_printf(o, "%s    other sets: %" PRIu64 " byte%s in %" PRIu64 " block%s\n", prefix,
                  other[0], other[0] == 1 ? "" : "s", other[1], other[1] == 1 ? "" : "s");
}

static const char *kind_name(uint64_t k) {
  return k == MP_ROOTS_AT_EXIT   ? "at exit"
         : k == MP_ROOTS_AT_DUMP ? "at a dump"
         : k == MP_ROOTS_AT_HIGH ? "at a new high"
                                 : "on demand";
}

static void census_text(rpt *r, mp_buf *o, const char *prefix, const rpt_roots_proc *p,
                        const mp_roots_census *c, val *acc) {
  int at_exit = c->kind == MP_ROOTS_AT_EXIT;
  uint64_t retained = c->heap_bytes - c->shared_bytes - c->unreached_bytes;
  mp_buf_printf(o, "%s\n%sWho holds the memory %s (%" PRIu64 " ms, pid %" PRIu64
                   ", %s): %" PRIu64 " bytes in %" PRIu64 " blocks live\n",
                prefix, prefix, kind_name(c->kind), c->t_ms, p->rs.pid, p->path,
                c->heap_bytes, c->heap_blocks);
  mp_buf_printf(o, "%s  retained by one root %" PRIu64 " bytes, shared by several %" PRIu64
                   " bytes, %s %" PRIu64 " bytes\n",
                prefix, retained, c->shared_bytes, at_exit ? "leaked" : "unreachable",
                c->unreached_bytes);
  mp_buf_printf(o, "%s\n%sRetained by root (bytes only that root reaches; reached: "
                   "shared ones too):\n",
                prefix, prefix);
  roots_table(r, o, prefix, p, c, acc);
  if (p->rs.version >= 3)
    bands_text(r, o, prefix, c);
  size_t nv;
  mp_buf_printf(o, "%s\n%s%s: %" PRIu64 " bytes in %" PRIu64 " blocks (direct: %" PRIu64
                   " bytes in %" PRIu64 " blocks no other leaked block points to)\n",
                prefix, prefix, at_exit ? "Leaked at exit (unreachable)" : "Unreachable",
                c->unreached_bytes, c->unreached_blocks, c->direct_bytes, c->direct_blocks);
  add_list(p, acc, c->unreached, c->n_unreached);
  val *v = take(acc, r->n_ctx + 1, &nv);
  if (!nv) mp_buf_printf(o, "%s    nothing\n", prefix);
  ctx_rows(r, o, prefix, v, nv, r->opts.top, ROW_DIRECT);
  free(v);
  mp_buf_printf(o, "%s\n%s%s: %" PRIu64 " bytes in %" PRIu64 " blocks (%" PRIu64
                   " bytes shared by several roots)\n",
                prefix, prefix, at_exit ? "Still reachable at exit" : "Reachable",
                c->heap_bytes - c->unreached_bytes, c->heap_blocks - c->unreached_blocks,
                c->shared_bytes);
  for (size_t k = 0; k < c->n_roots; k++) add_list(p, acc, c->roots[k].ctx, c->roots[k].n_ctx);
  add_list_of(p, acc, c->shared, c->n_shared, 1);
  v = take(acc, r->n_ctx + 1, &nv);
  if (!nv) mp_buf_printf(o, "%s    nothing\n", prefix);
  ctx_rows(r, o, prefix, v, nv, r->opts.top, ROW_SHARED);
  free(v);
}

void rpt_write_roots_text(rpt *r, mp_buf *o, const char *prefix) {
  val *acc = mp_xcalloc(r->n_ctx + 2, sizeof *acc);
  for (size_t i = 0; i < r->roots->n_proc; i++) {
    const rpt_roots_proc *p = &r->roots->proc[i];
    for (size_t k = 0; k < p->rs.n_census; k++)
      census_text(r, o, prefix, p, &p->rs.census[k], acc);
  }
  free(acc);
}

/* ---- per-context lists for the other formats (report.h) ------------------- */

/* Sorted by list alone, never by the number of contexts: a format calls
 * these once per root, and a program may have many of both. */

static int by_ctx(const void *a, const void *b) {
  const rpt_roots_val *x = a, *y = b;
  return x->ctx < y->ctx ? -1 : x->ctx > y->ctx;
}

/* As the text's (by_bytes): largest first, then by context. */
static int by_bytes_then_ctx(const void *a, const void *b) {
  const rpt_roots_val *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return by_ctx(a, b);
}

/* Appends list v to out[*n] by report context; `shared`: its bytes are
 * reached by several roots. */
static void put_list(const rpt_roots_proc *p, rpt_roots_val *out, size_t *n,
                     const mp_roots_ctx *v, size_t nv, int shared) {
  for (size_t i = 0; i < nv; i++)
    out[(*n)++] = (rpt_roots_val){mp_map_get(&p->ids, v[i].stack_id), v[i].bytes, v[i].blocks,
                                  v[i].direct_bytes, v[i].direct_blocks,
                                  shared ? v[i].bytes : 0};
}

/* Entries of one context summed into one, largest first. */
static rpt_roots_val *sum_by_ctx(rpt_roots_val *v, size_t n, size_t *n_out) {
  qsort(v, n, sizeof *v, by_ctx);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (m && v[m - 1].ctx == v[i].ctx) {
      rpt_roots_val *a = &v[m - 1];
      a->bytes += v[i].bytes;
      a->blocks += v[i].blocks;
      a->direct_bytes += v[i].direct_bytes;
      a->direct_blocks += v[i].direct_blocks;
      a->shared_bytes += v[i].shared_bytes;
    } else {
      v[m++] = v[i];
    }
  }
  qsort(v, m, sizeof *v, by_bytes_then_ctx);
  *n_out = m;
  return v;
}

rpt_roots_val *rpt_roots_by_ctx(const rpt *r, size_t k, const mp_roots_ctx *v, size_t n,
                                size_t *n_out) {
  rpt_roots_val *out = mp_xmalloc((n + 1) * sizeof *out);
  size_t m = 0;
  put_list(&r->roots->proc[k], out, &m, v, n, 0);
  return sum_by_ctx(out, m, n_out);
}

rpt_roots_val *rpt_roots_reachable(const rpt *r, size_t k, const mp_roots_census *c,
                                   size_t *n_out) {
  const rpt_roots_proc *p = &r->roots->proc[k];
  size_t n = c->n_shared, m = 0;
  for (size_t i = 0; i < c->n_roots; i++) n += c->roots[i].n_ctx;
  rpt_roots_val *out = mp_xmalloc((n + 1) * sizeof *out);
  for (size_t i = 0; i < c->n_roots; i++) put_list(p, out, &m, c->roots[i].ctx, c->roots[i].n_ctx, 0);
  put_list(p, out, &m, c->shared, c->n_shared, 1);
  return sum_by_ctx(out, m, n_out);
}

size_t *rpt_roots_order(const mp_roots_census *c, size_t *n_out) {
  size_t *ord = mp_xmalloc((c->n_roots + 1) * sizeof *ord), n = 0;
  for (size_t k = 0; k < c->n_roots; k++)
    if (c->roots[k].reached_blocks) ord[n++] = k;
  qsort_r(ord, n, sizeof *ord, by_retained, c->roots);
  *n_out = n;
  return ord;
}

const char *rpt_roots_kind_name(uint64_t kind) { return kind_name(kind); }
