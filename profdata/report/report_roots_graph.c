/* report_roots_graph.c - the series of the HTML page's graph of who held
 * the memory over a process's censuses, as hp2ps draws GHC's retainer
 * profiles: the member "graph" of the process in "roots"
 * (report_roots_json.c), which report_page.html draws as stacked layers.
 *
 * The layers, bottom up: the bytes retained by each of the GRAPH_ROOTS
 * roots (by name) that retained the most at some census, then the shared
 * and the unreached bytes.  Each census's whole heap is its total: what
 * the layers leave of it is the bytes retained by the roots not drawn.
 *
 *   "graph":{"labels":[label...],"t":[ms...],"total":[bytes...],
 *            "series":[[bytes...]...]}
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define GRAPH_ROOTS 8 /* roots drawn as layers of their own */

/* A root that retains bytes at a census, by name. */
typedef struct named_bytes {
  char *label;
  uint64_t bytes;
  size_t census;
} named_bytes;

static int by_label(const void *a, const void *b) {
  const named_bytes *x = a, *y = b;
  int d = strcmp(x->label, y->label);
  if (d) return d;
  return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

static int by_bytes_desc(const void *a, const void *b) {
  const named_bytes *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return strcmp(x->label, y->label);
}

/* Every root that retains a byte at some census, named; *m gets how many. */
static named_bytes *retaining_roots(const mp_roots *rs, size_t *m) {
  size_t total = 0;
  for (size_t c = 0; c < rs->n_census; c++) total += rs->census[c].n_roots;
  named_bytes *all = mp_xmalloc((total + 1) * sizeof *all);
  char label[600];
  *m = 0;
  for (size_t c = 0; c < rs->n_census; c++)
    for (size_t i = 0; i < rs->census[c].n_roots; i++) {
      const mp_roots_root *x = &rs->census[c].roots[i];
      if (!x->retained_bytes) continue;
      mp_roots_label(&rs->census[c], x, label, sizeof label);
      all[(*m)++] = (named_bytes){mp_xstrndup(label, strlen(label)), x->retained_bytes, c};
    }
  return all;
}

/* The labels of the `max` roots (by name) that retained the most bytes
 * at some census, most first (pointers into all); *n gets how many. */
static const char **graph_roots(const named_bytes *all, size_t m, size_t max, size_t *n) {
  named_bytes *v = mp_xmalloc((m + 1) * sizeof *v);
  if (m) memcpy(v, all, m * sizeof *v);
  qsort(v, m, sizeof *v, by_label); /* each label's largest first */
  size_t u = 0;
  for (size_t i = 0; i < m; i++)
    if (!u || strcmp(v[u - 1].label, v[i].label)) v[u++] = v[i];
  qsort(v, u, sizeof *v, by_bytes_desc);
  *n = u < max ? u : max;
  const char **out = mp_xmalloc((*n + 1) * sizeof *out);
  for (size_t i = 0; i < *n; i++) out[i] = v[i].label;
  free(v);
  return out;
}

/* Per census (cols), the bytes each of the n_g graph roots retains. */
static uint64_t *retained_by(const named_bytes *all, size_t m, const char **g, size_t n_g,
                             size_t n_c) {
  uint64_t *v = mp_xcalloc(n_g * n_c + 1, sizeof *v);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n_g; j++)
      if (!strcmp(all[i].label, g[j])) v[j * n_c + all[i].census] += all[i].bytes;
  return v;
}

void rpt_write_roots_graph_json(mp_buf *o, const mp_roots *rs) {
  size_t m, n_g, n_c = rs->n_census;
  named_bytes *all = retaining_roots(rs, &m);
  const char **g = graph_roots(all, m, GRAPH_ROOTS, &n_g);
  uint64_t *by_root = retained_by(all, m, g, n_g, n_c);
  mp_buf_printf(o, ",\"graph\":{\"labels\":[");
  for (size_t i = 0; i < n_g; i++) {
    mp_buf_printf(o, "%s\"", i ? "," : "");
    rpt_json_str(o, g[i]);
    mp_buf_u8(o, '"');
  }
  mp_buf_printf(o, "],\"t\":[");
  for (size_t c = 0; c < n_c; c++) {
    if (c) mp_buf_u8(o, ',');
    rpt_put_u64(o, rs->census[c].t_ms);
  }
  mp_buf_printf(o, "],\"total\":[");
  for (size_t c = 0; c < n_c; c++) {
    if (c) mp_buf_u8(o, ',');
    rpt_put_u64(o, rs->census[c].heap_bytes);
  }
  mp_buf_printf(o, "],\"series\":[");
  for (size_t i = 0; i < n_g + 2; i++) { /* the roots, shared, unreached */
    mp_buf_printf(o, "%s[", i ? "," : "");
    for (size_t c = 0; c < n_c; c++) {
      const mp_roots_census *x = &rs->census[c];
      if (c) mp_buf_u8(o, ',');
      rpt_put_u64(o, i < n_g    ? by_root[i * n_c + c]
                     : i == n_g ? x->shared_bytes
                                : x->unreached_bytes);
    }
    mp_buf_u8(o, ']');
  }
  mp_buf_printf(o, "]}");
  for (size_t i = 0; i < m; i++) free(all[i].label);
  free(all);
  free(g);
  free(by_root);
}
