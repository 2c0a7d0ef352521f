/* data_access.c - the data-access profile of a memory profile
 * (data_access.h): LLVM's insertion-ordered tables, name canonicalization,
 * and merging of the same record across inputs.
 */
#include "data_access.h"

#include <stdlib.h>
#include <string.h>

/* The profile's data-access profile, noting that input p->input has one. */
static mp_dap *dap_of_input(mp_profile *p) {
  mp_dap *d = mp_dap_get(p);
  if (d->last_input != p->input || !d->inputs) {
    d->inputs++;
    d->last_input = p->input;
  }
  return d;
}

mp_dap *mp_dap_get(mp_profile *p) {
  if (p->dap) return p->dap;
  mp_dap *d = mp_xcalloc(1, sizeof *d);
  mp_map_init(&d->str_index, 1);
  mp_map_init(&d->sym_rec, 1);
  mp_map_init(&d->hash_rec, 1);
  mp_map_init(&d->cold_sym_set, 1);
  mp_map_init(&d->cold_hash_set, 1);
  p->dap = d;
  p->dap_free = mp_dap_free;
  return d;
}

void mp_dap_free(mp_dap *d) {
  if (!d) return;
  for (size_t i = 0; i < d->n_recs; i++) free(d->recs[i].locs);
  free(d->recs);
  free(d->strs);
  free(d->cold_syms);
  free(d->cold_hashes);
  mp_map_free(&d->str_index);
  mp_map_free(&d->sym_rec);
  mp_map_free(&d->hash_rec);
  mp_map_free(&d->cold_sym_set);
  mp_map_free(&d->cold_hash_set);
  free(d);
}

int mp_dap_empty(const mp_dap *d) {
  return !d || (!d->n_recs && !d->n_cold_syms && !d->n_cold_hashes);
}

size_t mp_dap_canonical_len(const char *name, size_t len) {
  static const char uniq[] = ".__uniq.";
  size_t from = 0;
  for (size_t i = 0; i + sizeof uniq - 1 <= len; i++)
    if (memcmp(name + i, uniq, sizeof uniq - 1) == 0) {
      from = i + sizeof uniq - 1;
      break;
    }
  const char *dot = from < len ? memchr(name + from, '.', len - from) : NULL;
  return dot && dot != name ? (size_t)(dot - name) : len;
}

uint32_t mp_dap_string(mp_profile *p, const char *s, size_t len) {
  mp_dap *d = mp_dap_get(p);
  uint32_t id;
  if (s >= p->strings && s < p->strings + p->n_strings_bytes) {
    /* a part of an interned string (a canonical name): interning it may
     * move the strings it is taken from */
    char *copy = mp_xmalloc(len + 1);
    memcpy(copy, s, len);
    id = mp_intern_string(p, copy, len);
    free(copy);
  } else {
    id = mp_intern_string(p, s, len);
  }
  uint32_t idx = mp_map_get_or_put(&d->str_index, id, (uint32_t)d->n_strs);
  if (idx != MP_MAP_EMPTY) return idx;
  MP_VEC_RESERVE(d->strs, d->cap_strs, d->n_strs + 1);
  d->strs[d->n_strs] = id;
  return (uint32_t)d->n_strs++;
}

/* The record keyed `key` in `index`, merged or created. */
static long add_record(mp_profile *p, mp_map *index, uint64_t key,
                       uint64_t id, int literal, uint64_t count,
                       mp_err *err) {
  mp_dap *d = dap_of_input(p);
  uint32_t r = mp_map_get_or_put(index, key, (uint32_t)d->n_recs);
  if (r != MP_MAP_EMPTY) {
    mp_dap_record *x = &d->recs[r];
    if (x->input == p->input)
      return literal
                 ? mp_fail(err, "data-access record of string literal hash "
                           "%llu is given twice (add the counts up)",
                           (unsigned long long)id)
                 : mp_fail(err, "data-access record of symbol '%s' is given "
                           "twice (add the counts up)",
                           mp_dap_str(p, d, (uint32_t)id));
    x->count = x->count + count < count ? UINT64_MAX : x->count + count;
    x->input = p->input;
    return r;
  }
  MP_VEC_RESERVE(d->recs, d->cap_recs, d->n_recs + 1);
  mp_dap_record *x = &d->recs[d->n_recs];
  memset(x, 0, sizeof *x);
  x->id = id;
  x->is_literal = (uint8_t)literal;
  x->count = count;
  x->first_input = x->input = p->input;
  return (long)d->n_recs++;
}

long mp_dap_add_symbol(mp_profile *p, const char *name, size_t len,
                       uint64_t count, mp_err *err) {
  if (!len) return mp_fail(err, "data-access record with an empty symbol name");
  uint32_t s = mp_dap_string(p, name, mp_dap_canonical_len(name, len));
  return add_record(p, &p->dap->sym_rec, s, s, 0, count, err);
}

long mp_dap_add_literal(mp_profile *p, uint64_t hash, uint64_t count,
                        mp_err *err) {
  return add_record(p, &mp_dap_get(p)->hash_rec, hash, hash, 1, count, err);
}

void mp_dap_add_loc(mp_profile *p, size_t rec, const char *file, size_t len,
                    uint32_t line) {
  uint32_t f = mp_dap_string(p, file, len);
  mp_dap_record *x = &p->dap->recs[rec];
  if (x->first_input != p->input) {
    /* merged across inputs: keep each location once */
    for (uint32_t i = 0; i < x->n_locs; i++)
      if (x->locs[i].file == f && x->locs[i].line == line) return;
  }
  MP_VEC_RESERVE(x->locs, x->cap_locs, x->n_locs + 1);
  x->locs[x->n_locs++] = (mp_dap_loc){f, line};
}

int mp_dap_add_cold_symbol(mp_profile *p, const char *name, size_t len,
                           mp_err *err) {
  if (!len) return mp_fail(err, "known-cold symbol with an empty name");
  mp_dap *d = dap_of_input(p);
  uint32_t s = mp_dap_string(p, name, mp_dap_canonical_len(name, len));
  if (mp_map_get_or_put(&d->cold_sym_set, s, 0) != MP_MAP_EMPTY) return 0;
  MP_VEC_RESERVE(d->cold_syms, d->cap_cold_syms, d->n_cold_syms + 1);
  d->cold_syms[d->n_cold_syms++] = s;
  return 0;
}

void mp_dap_add_cold_hash(mp_profile *p, uint64_t hash) {
  mp_dap *d = dap_of_input(p);
  if (hash == UINT64_MAX) return;
  if (mp_map_get_or_put(&d->cold_hash_set, hash, 0) != MP_MAP_EMPTY) return;
  MP_VEC_RESERVE(d->cold_hashes, d->cap_cold_hashes, d->n_cold_hashes + 1);
  d->cold_hashes[d->n_cold_hashes++] = hash;
}
