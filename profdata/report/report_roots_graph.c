/* report_roots_graph.c - the series of the HTML page's graph of who held
 * the memory over a process's censuses, as hp2ps draws GHC's retainer
 * profiles: the member "graph" of the process in "roots"
 * (report_roots_json.c), which report_page.html draws as stacked layers.
 *
 * The layers, bottom up: the bytes retained by each of the GRAPH_ROOTS
 * roots (by name) that retained the most at some census; in files of
 * version 3, the bytes of each of the GRAPH_SETS sets of roots (bands)
 * that shared the most at some census, a set being the same set at every
 * census its roots' labels are, 0 at a census that lists no band of it;
 * then the census's other shared bytes (those of the sets not drawn and
 * those the file lists in no band), when some census has any; in older
 * files instead all the shared bytes as one layer; then the unreached
 * bytes.  Each census's whole heap is its total: what the layers leave
 * of it is the bytes retained by the roots not drawn.
 *
 *   "graph":{"labels":[label...],"sets":[[label...]...],"otherSets":0|1,
 *            "t":[ms...],"total":[bytes...],"series":[[bytes...]...]}
 *
 * "sets" (each a band's labels, in the order of its roots at the first
 * census listing it) and "otherSets" only from version 3 files; "series"
 * holds a value per census for each root, each set, the other sets (with
 * "otherSets":1) or the shared bytes (without "sets"), and the unreached
 * bytes, in that order.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define GRAPH_ROOTS 8 /* roots drawn as layers of their own */
#define GRAPH_SETS 8  /* sets of roots drawn as layers of their own */

/* A root's retained bytes, or a set's shared bytes, at a census, by name;
 * a set's band is its index in that census's bands. */
typedef struct named_bytes {
  char *label;
  uint64_t bytes;
  size_t census, band;
} named_bytes;

/* The layers of one kind: every named figure of every census, the names
 * drawn (pointers into all) and their bytes per census (cols). */
typedef struct layers {
  named_bytes *all;
  size_t m;
  const char **drawn;
  size_t n;
  uint64_t *v;
} layers;

void rpt_write_band_labels_json(mp_buf *o, const mp_roots_census *c, const mp_roots_band *b) {
  char label[600];
  mp_buf_u8(o, '[');
  for (size_t j = 0; j < b->n_roots; j++) {
    mp_roots_label(c, &c->roots[b->roots[j]], label, sizeof label);
    mp_buf_printf(o, "%s\"", j ? "," : "");
    rpt_json_str(o, label);
    mp_buf_u8(o, '"');
  }
  mp_buf_u8(o, ']');
}

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

static int by_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every root that retains a byte at some census, named. */
static void retaining_roots(const mp_roots *rs, layers *l) {
  size_t total = 0;
  for (size_t c = 0; c < rs->n_census; c++) total += rs->census[c].n_roots;
  l->all = mp_xmalloc((total + 1) * sizeof *l->all);
  char label[600];
  for (size_t c = 0; c < rs->n_census; c++)
    for (size_t i = 0; i < rs->census[c].n_roots; i++) {
      const mp_roots_root *x = &rs->census[c].roots[i];
      if (!x->retained_bytes) continue;
      mp_roots_label(&rs->census[c], x, label, sizeof label);
      l->all[l->m++] = (named_bytes){mp_xstrndup(label, strlen(label)), x->retained_bytes, c, 0};
    }
}

/* A set's name at every census, whatever the order of its roots there:
 * its roots' labels, sorted, joined by " + "; malloc'd. */
static char *set_name(const mp_roots_census *c, const mp_roots_band *b) {
  char **l = mp_xmalloc((b->n_roots + 1) * sizeof *l);
  char label[600];
  size_t len = 1;
  for (size_t j = 0; j < b->n_roots; j++) {
    mp_roots_label(c, &c->roots[b->roots[j]], label, sizeof label);
    l[j] = mp_xstrndup(label, strlen(label));
    len += strlen(label) + 3;
  }
  qsort(l, b->n_roots, sizeof *l, by_str);
  char *name = mp_xmalloc(len), *p = name;
  *p = 0;
  for (size_t j = 0; j < b->n_roots; j++) {
    p += sprintf(p, "%s%s", j ? " + " : "", l[j]);
    free(l[j]);
  }
  free(l);
  return name;
}

/* Every band of every census, named by its set, in the censuses' order. */
static void sharing_sets(const mp_roots *rs, layers *l) {
  size_t total = 0;
  for (size_t c = 0; c < rs->n_census; c++) total += rs->census[c].n_bands;
  l->all = mp_xmalloc((total + 1) * sizeof *l->all);
  for (size_t c = 0; c < rs->n_census; c++)
    for (size_t i = 0; i < rs->census[c].n_bands; i++) {
      const mp_roots_band *b = &rs->census[c].bands[i];
      l->all[l->m++] = (named_bytes){set_name(&rs->census[c], b), b->bytes, c, i};
    }
}

/* Draws the `max` names with the most bytes at some census, most first,
 * each with its bytes per census (summed over entries of the same name). */
static void draw_largest(layers *l, size_t max, size_t n_c) {
  named_bytes *v = mp_xmalloc((l->m + 1) * sizeof *v);
  if (l->m) memcpy(v, l->all, l->m * sizeof *v);
  qsort(v, l->m, sizeof *v, by_label); /* each name's largest first */
  size_t u = 0;
  for (size_t i = 0; i < l->m; i++)
    if (!u || strcmp(v[u - 1].label, v[i].label)) v[u++] = v[i];
  qsort(v, u, sizeof *v, by_bytes_desc);
  l->n = u < max ? u : max;
  l->drawn = mp_xmalloc((l->n + 1) * sizeof *l->drawn);
  for (size_t i = 0; i < l->n; i++) l->drawn[i] = v[i].label;
  free(v);
  l->v = mp_xcalloc(l->n * n_c + 1, sizeof *l->v);
  for (size_t i = 0; i < l->m; i++)
    for (size_t j = 0; j < l->n; j++) {
      const named_bytes *x = &l->all[i];
      if (!strcmp(x->label, l->drawn[j])) l->v[j * n_c + x->census] += x->bytes;
    }
}

static void layers_free(layers *l) {
  for (size_t i = 0; i < l->m; i++) free(l->all[i].label);
  free(l->all);
  free(l->drawn);
  free(l->v);
}

/* The drawn sets as label lists, each as the first census listing it
 * orders its roots. */
static void sets_json(mp_buf *o, const mp_roots *rs, const layers *s) {
  mp_buf_printf(o, ",\"sets\":[");
  for (size_t j = 0; j < s->n; j++) {
    size_t i = 0;
    while (strcmp(s->all[i].label, s->drawn[j])) i++;
    const mp_roots_census *c = &rs->census[s->all[i].census];
    if (j) mp_buf_u8(o, ',');
    rpt_write_band_labels_json(o, c, &c->bands[s->all[i].band]);
  }
  mp_buf_u8(o, ']');
}

/* [v[0],...,v[n_c - 1]] */
static void values_json(mp_buf *o, const uint64_t *v, size_t n_c) {
  mp_buf_u8(o, '[');
  for (size_t c = 0; c < n_c; c++) {
    if (c) mp_buf_u8(o, ',');
    rpt_put_u64(o, v[c]);
  }
  mp_buf_u8(o, ']');
}

/* Takes the drawn sets' bytes off each census's (col's) shared bytes,
 * leaving the other sets'; 1 if a census has some. */
static int other_sets(const layers *s, uint64_t *shared, size_t n_c) {
  int any = 0;
  for (size_t c = 0; c < n_c; c++) {
    for (size_t j = 0; j < s->n; j++) shared[c] -= s->v[j * n_c + c];
    any |= shared[c] != 0;
  }
  return any;
}

/* Per census (cols) its time, its heap, its shared and unreached bytes. */
static uint64_t *census_figures(const mp_roots *rs) {
  size_t n_c = rs->n_census;
  uint64_t *f = mp_xcalloc(4 * n_c + 1, sizeof *f);
  for (size_t c = 0; c < n_c; c++) {
    const mp_roots_census *x = &rs->census[c];
    f[c] = x->t_ms, f[n_c + c] = x->heap_bytes;
    f[2 * n_c + c] = x->shared_bytes, f[3 * n_c + c] = x->unreached_bytes;
  }
  return f;
}

void rpt_write_roots_graph_json(mp_buf *o, const mp_roots *rs) {
  size_t n_c = rs->n_census, n_rows = 0;
  int by_set = rs->version >= 3, any_other = 0;
  layers roots = {0}, sets = {0};
  retaining_roots(rs, &roots);
  draw_largest(&roots, GRAPH_ROOTS, n_c);
  sharing_sets(rs, &sets);
  draw_largest(&sets, GRAPH_SETS, n_c);
  uint64_t *f = census_figures(rs), *shared = f + 2 * n_c;
  if (by_set) any_other = other_sets(&sets, shared, n_c);
  const uint64_t *rows[GRAPH_ROOTS + GRAPH_SETS + 2];
  for (size_t i = 0; i < roots.n; i++) rows[n_rows++] = roots.v + i * n_c;
  for (size_t i = 0; by_set && i < sets.n; i++) rows[n_rows++] = sets.v + i * n_c;
  if (!by_set || any_other) rows[n_rows++] = shared;
  rows[n_rows++] = f + 3 * n_c;

  mp_buf_printf(o, ",\"graph\":{\"labels\":[");
  for (size_t i = 0; i < roots.n; i++) {
    mp_buf_printf(o, "%s\"", i ? "," : "");
    rpt_json_str(o, roots.drawn[i]);
    mp_buf_u8(o, '"');
  }
  mp_buf_u8(o, ']');
  if (by_set) {
    sets_json(o, rs, &sets);
    mp_buf_printf(o, ",\"otherSets\":%d", any_other);
  }
  mp_buf_printf(o, ",\"t\":");
  values_json(o, f, n_c);
  mp_buf_printf(o, ",\"total\":");
  values_json(o, f + n_c, n_c);
  mp_buf_printf(o, ",\"series\":[");
  for (size_t i = 0; i < n_rows; i++) {
    if (i) mp_buf_u8(o, ',');
    values_json(o, rows[i], n_c);
  }
  mp_buf_printf(o, "]}");
  layers_free(&roots);
  layers_free(&sets);
  free(f);
}
