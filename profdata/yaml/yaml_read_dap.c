/* yaml_read_dap.c - reads the YAML document's DataAccessProfiles (LLVM 22,
 * static data partitioning) into the model (data_access.h): the sampled
 * records with their locations, the known-cold symbols and string hashes.
 */
#include <string.h>

#include "yaml_read_priv.h"
#include "profdata/model/data_access.h"

/* DataAccessProfiles (LLVM 22, static data partitioning): into the model
 * (data_access.h) in LLVM's order: the records (each symbol before its
 * file names), then the known-cold symbols and hashes, whatever the order
 * of the keys. */

/* A scalar that becomes a string of the indexed file's name table, which
 * separates names with \x01 and whose strings we keep NUL-terminated. */
static int read_name(yreader *r, const char *what, uint32_t *id) {
  if (yr_expect_scalar(r, what)) return -1;
  if (memchr(yr_scalar_text(r), 1, yr_scalar_len(r)) ||
      memchr(yr_scalar_text(r), 0, yr_scalar_len(r)))
    return yr_fail_at(r, yr_here(r), "%s contains a byte 0x00 or 0x01", what);
  *id = mp_intern_string(r->p, yr_scalar_text(r), yr_scalar_len(r));
  return yr_next(r);
}

/* One of a record's Locations, kept in r->locs until the record exists. */
static int read_location(yreader *r) {
  static const char *const keys[] = {"FileName", "Line"};
  uint64_t seen = 0, line = 0;
  uint32_t file = mp_intern_string(r->p, "", 0);
  int empty;
  if (yr_begin_map(r, "a location", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (yr_map_key(r, "a location", keys, 2, &seen, &k)) return -1;
    if (k == 0 ? read_name(r, "FileName", &file)
               : yr_read_uint(r, "Line", UINT32_MAX, &line))
      return -1;
  }
  MP_VEC_RESERVE(r->locs, r->cap_locs, r->n_locs + 1);
  r->locs[r->n_locs++] = (pending_loc){file, (uint32_t)line};
  return yr_next(r);
}

static int read_sampled(yreader *r) {
  static const char *const keys[] = {"Symbol", "Hash", "AccessCount",
                                     "Locations"};
  yaml_mark_t start = yr_here(r);
  uint64_t seen = 0, hash = 0, count = 0;
  uint32_t sym = MP_NO_STRING;
  int empty;
  r->n_locs = 0;
  if (yr_begin_map(r, "a data-access record", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (yr_map_key(r, "a data-access record", keys, 4, &seen, &k)) return -1;
    int rc = k == 0   ? read_name(r, "Symbol", &sym)
             : k == 1 ? yr_read_uint(r, "Hash", UINT64_MAX, &hash)
             : k == 2 ? yr_read_uint(r, "AccessCount", UINT64_MAX, &count)
                      : yr_read_site_list(r, "Locations", read_location);
    if (rc) return -1;
  }
  if (yr_next(r) ||
      yr_check_required(r, start, "a data-access record", keys, 4, seen))
    return -1;
  /* LLVM: a record with a non-empty Symbol is a symbol's, else a string
   * literal's (Hash, 0 when missing) */
  const char *name = sym == MP_NO_STRING ? "" : mp_string(r->p, sym);
  mp_err e;
  long rec = *name ? mp_dap_add_symbol(r->p, name, strlen(name), count, &e)
                   : mp_dap_add_literal(r->p, hash, count, &e);
  if (rec < 0) return yr_fail_at(r, start, "%s", e.msg);
  for (size_t i = 0; i < r->n_locs; i++) {
    const char *f = mp_string(r->p, r->locs[i].file);
    mp_dap_add_loc(r->p, (size_t)rec, f, strlen(f), r->locs[i].line);
  }
  return 0;
}

static int read_cold_symbol(yreader *r) {
  uint32_t id;
  if (read_name(r, "a known-cold symbol", &id)) return -1;
  MP_VEC_RESERVE(r->cold, r->cap_cold, r->n_cold + 1);
  r->cold[r->n_cold++] = id;
  return 0;
}

static int read_cold_hash(yreader *r) {
  uint64_t h;
  if (yr_read_uint(r, "a known-cold string hash", UINT64_MAX, &h)) return -1;
  mp_dap_add_cold_hash(r->p, h);
  return 0;
}

int yr_read_data_access(yreader *r) {
  static const char *const keys[] = {"SampledRecords", "KnownColdSymbols",
                                     "KnownColdStrHashes"};
  static int (*const read_one[])(yreader *) = {read_sampled, read_cold_symbol,
                                               read_cold_hash};
  yaml_mark_t start = yr_here(r);
  uint64_t seen = 0;
  int empty;
  if (yr_begin_map(r, "DataAccessProfiles", 1, &empty)) return -1;
  while (!empty && r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (yr_map_key(r, "DataAccessProfiles", keys, 3, &seen, &k) ||
        yr_read_site_list(r, keys[k], read_one[k]))
      return -1;
  }
  for (size_t i = 0; i < r->n_cold; i++) {
    const char *name = mp_string(r->p, r->cold[i]);
    mp_err e;
    if (mp_dap_add_cold_symbol(r->p, name, strlen(name), &e))
      return yr_fail_at(r, start, "%s", e.msg);
  }
  return empty ? 0 : yr_next(r);
}

