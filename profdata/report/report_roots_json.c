/* report_roots_json.c - who holds the memory, as the JSON member "roots"
 * of the HTML page's data (report_html.c; report_page.html draws it).
 *
 * Per process with a roots file: its last census as the text report
 * shows it (report_roots.c, the same rows and the same --top limits):
 * the roots by retained bytes with their reached bytes and top retained
 * contexts, the unreached (at exit: leaked) contexts with their direct
 * bytes, and the still reachable ones with their shared bytes; and, when
 * it took two censuses or more, the series of a graph of who held the
 * memory over time (report_roots_graph.c).  The bands (the sets of roots
 * sharing blocks) are the text report's rows: at most --top, the rest
 * added to the other sets.
 *
 *   "roots":{"procs":[{"path","pid","censuses","last":{"kind","exit","t",
 *     "heap":[bytes,blocks],"shared":[..],"unreached":[..],"direct":[..],
 *     "roots":[{"label","reached":[..],"retained":[..],"partial",
 *               "ctx":[[ref,bytes,blocks]...],"more"}...],"rootsMore",
 *     "leaked":[[ref,bytes,blocks,direct bytes]...],"leakedMore",
 *     "reachable":[[ref,bytes,blocks,shared bytes]...],"reachableMore",
 *     "bands":[[[label...],bytes,blocks]...] (version 3 files),
 *     "bandsOther":[bytes,blocks]},
 *     "graph":{"labels","sets","otherSets","t","total","series"}}]}
 *
 * A context `ref` is the report context's index (the page's context
 * rows), -1 the stacks without a symbolizable frame; every context
 * listed is marked in `shown`, so that the page has its full stack.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"

#define ROOT_CONTEXTS 5 /* contexts under each root, as the text report */

static size_t top_of(const rpt *r, size_t n) {
  return r->opts.top && r->opts.top < n ? r->opts.top : n;
}

static void pair(mp_buf *o, const char *key, uint64_t a, uint64_t b) {
  mp_buf_printf(o, ",\"%s\":[%" PRIu64 ",%" PRIu64 "]", key, a, b);
}

static void put_ref(const rpt *r, mp_buf *o, uint32_t ctx, uint8_t *shown) {
  if (ctx >= r->n_ctx) {
    mp_buf_printf(o, "-1");
    return;
  }
  shown[ctx] = 1;
  rpt_put_u64(o, ctx);
}

/* Rows [ref,bytes,blocks(,extra)] of at most `max` (0: all), then
 * ,"<key>More":N, the rows left out.  extra: 1 direct, 2 shared bytes. */
static void rows(const rpt *r, mp_buf *o, const char *key, rpt_roots_val *v, size_t n_v,
                 size_t max, int extra, uint8_t *shown) {
  size_t n = max && max < n_v ? max : n_v;
  mp_buf_printf(o, ",\"%s\":[", key);
  for (size_t i = 0; i < n; i++) {
    mp_buf_printf(o, "%s[", i ? "," : "");
    put_ref(r, o, v[i].ctx, shown);
    mp_buf_printf(o, ",%" PRIu64 ",%" PRIu64, v[i].bytes, v[i].blocks);
    if (extra) mp_buf_printf(o, ",%" PRIu64, extra == 1 ? v[i].direct_bytes : v[i].shared_bytes);
    mp_buf_u8(o, ']');
  }
  mp_buf_printf(o, "],\"%sMore\":%zu", key, n_v - n);
  free(v);
}

static void roots_json(const rpt *r, mp_buf *o, size_t k, const mp_roots_census *c,
                       uint8_t *shown) {
  size_t n;
  size_t *ord = rpt_roots_order(c, &n);
  size_t top = top_of(r, n);
  char label[600];
  mp_buf_printf(o, ",\"roots\":[");
  for (size_t i = 0; i < top; i++) {
    const mp_roots_root *x = &c->roots[ord[i]];
    mp_roots_label(c, x, label, sizeof label);
    mp_buf_printf(o, "%s{\"label\":\"", i ? "," : "");
    rpt_json_str(o, label);
    mp_buf_u8(o, '"');
    pair(o, "reached", x->reached_bytes, x->reached_blocks);
    pair(o, "retained", x->retained_bytes, x->retained_blocks);
    mp_buf_printf(o, ",\"partial\":%d", (x->flags & MP_ROOT_REACHED_PARTIAL) ? 1 : 0);
    size_t nv;
    rpt_roots_val *v = rpt_roots_by_ctx(r, k, x->ctx, x->n_ctx, &nv);
    rows(r, o, "ctx", v, nv, ROOT_CONTEXTS, 0, shown);
    mp_buf_u8(o, '}');
  }
  mp_buf_printf(o, "],\"rootsMore\":%zu", n - top);
  free(ord);
}

/* The bands as the text report lists them (report_roots.c). */
static void bands_json(const rpt *r, mp_buf *o, const mp_roots_census *c) {
  if (!c->n_bands && !c->other_blocks) return;
  size_t top = top_of(r, c->n_bands);
  uint64_t other[2] = {c->other_bytes, c->other_blocks};
  mp_buf_printf(o, ",\"bands\":[");
  for (size_t i = 0; i < c->n_bands; i++) {
    const mp_roots_band *b = &c->bands[i];
    if (i >= top) {
      other[0] += b->bytes, other[1] += b->blocks;
      continue;
    }
    mp_buf_printf(o, "%s[", i ? "," : "");
    rpt_write_band_labels_json(o, c, b);
    mp_buf_printf(o, ",%" PRIu64 ",%" PRIu64 "]", b->bytes, b->blocks);
  }
  mp_buf_u8(o, ']');
  pair(o, "bandsOther", other[0], other[1]);
}

static void census_json(const rpt *r, mp_buf *o, size_t k, const mp_roots_census *c,
                        uint8_t *shown) {
  mp_buf_printf(o, "\"last\":{\"kind\":\"%s\",\"exit\":%d,\"t\":%" PRIu64,
                rpt_roots_kind_name(c->kind), c->kind == MP_ROOTS_AT_EXIT, c->t_ms);
  pair(o, "heap", c->heap_bytes, c->heap_blocks);
  pair(o, "shared", c->shared_bytes, c->shared_blocks);
  pair(o, "unreached", c->unreached_bytes, c->unreached_blocks);
  pair(o, "direct", c->direct_bytes, c->direct_blocks);
  roots_json(r, o, k, c, shown);
  size_t nv;
  rpt_roots_val *v = rpt_roots_by_ctx(r, k, c->unreached, c->n_unreached, &nv);
  rows(r, o, "leaked", v, nv, r->opts.top, 1, shown);
  v = rpt_roots_reachable(r, k, c, &nv);
  rows(r, o, "reachable", v, nv, r->opts.top, 2, shown);
  bands_json(r, o, c);
  mp_buf_u8(o, '}');
}

void rpt_write_roots_json(const rpt *r, mp_buf *o, uint8_t *shown) {
  size_t n = rpt_roots_n_proc(r);
  if (!n) return;
  mp_buf_printf(o, ",\"roots\":{\"procs\":[");
  for (size_t k = 0; k < n; k++) {
    const char *path;
    const mp_roots *rs = rpt_roots_file(r, k, &path);
    mp_buf_printf(o, "%s{\"path\":\"", k ? "," : "");
    rpt_json_str(o, path);
    mp_buf_printf(o, "\",\"pid\":%" PRIu64 ",\"censuses\":%zu,", rs->pid, rs->n_census);
    if (rs->n_census)
      census_json(r, o, k, &rs->census[rs->n_census - 1], shown);
    else
      mp_buf_printf(o, "\"last\":null");
    if (rs->n_census >= 2) rpt_write_roots_graph_json(o, rs);
    mp_buf_u8(o, '}');
  }
  mp_buf_printf(o, "]}");
}
