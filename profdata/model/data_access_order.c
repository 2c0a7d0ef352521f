/* data_access_order.c - the canonical order of a data-access profile that
 * more than one input brought (data_access.h), so that a merge gives the
 * same bytes for any order and grouping of its inputs: symbol records by
 * name, then string-literal records by hash; each record's locations by
 * file name and line; the string table rebuilt in that order (known-cold
 * symbols, by name, after the records' strings); known-cold hashes by
 * value.
 */
#include <stdlib.h>
#include <string.h>

#include "data_access.h"

static const mp_profile *g_p;
static const mp_dap *g_d;

static const char *str(uint32_t i) { return mp_dap_str(g_p, g_d, i); }

static int by_record(const void *a, const void *b) {
  const mp_dap_record *x = &g_d->recs[*(const uint32_t *)a];
  const mp_dap_record *y = &g_d->recs[*(const uint32_t *)b];
  if (x->is_literal != y->is_literal) return x->is_literal - y->is_literal;
  if (x->is_literal) return x->id < y->id ? -1 : x->id > y->id;
  return strcmp(str((uint32_t)x->id), str((uint32_t)y->id));
}

static int by_location(const void *a, const void *b) {
  const mp_dap_loc *x = a, *y = b;
  int c = strcmp(str(x->file), str(y->file));
  return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int by_name(const void *a, const void *b) {
  return strcmp(str(*(const uint32_t *)a), str(*(const uint32_t *)b));
}

static int by_value(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

void mp_dap_sort_canonically(mp_profile *p) {
  mp_dap *old = p->dap;
  if (!old || old->inputs < 2) return;
  g_p = p;
  g_d = old;
  uint32_t *order = mp_xmalloc((old->n_recs + 1) * 4);
  for (size_t i = 0; i < old->n_recs; i++) order[i] = (uint32_t)i;
  if (old->n_recs) qsort(order, old->n_recs, 4, by_record);
  if (old->n_cold_syms) qsort(old->cold_syms, old->n_cold_syms, 4, by_name);
  if (old->n_cold_hashes)
    qsort(old->cold_hashes, old->n_cold_hashes, 8, by_value);
  p->dap = NULL;
  mp_dap *d = mp_dap_get(p);
  for (size_t i = 0; i < old->n_recs; i++) {
    const mp_dap_record *r = &old->recs[order[i]];
    long x; /* cannot fail: the records are distinct, names not empty */
    if (r->is_literal) {
      x = mp_dap_add_literal(p, r->id, r->count, NULL);
    } else {
      const char *name = str((uint32_t)r->id);
      x = mp_dap_add_symbol(p, name, strlen(name), r->count, NULL);
    }
    if (r->n_locs) qsort(r->locs, r->n_locs, sizeof *r->locs, by_location);
    for (uint32_t j = 0; j < r->n_locs; j++) {
      const char *f = str(r->locs[j].file);
      mp_dap_add_loc(p, (size_t)x, f, strlen(f), r->locs[j].line);
    }
  }
  for (size_t i = 0; i < old->n_cold_syms; i++) {
    const char *s = str(old->cold_syms[i]);
    mp_dap_add_cold_symbol(p, s, strlen(s), NULL);
  }
  for (size_t i = 0; i < old->n_cold_hashes; i++)
    mp_dap_add_cold_hash(p, old->cold_hashes[i]);
  d->inputs = old->inputs;
  d->last_input = old->last_input;
  free(order);
  mp_dap_free(old);
}
