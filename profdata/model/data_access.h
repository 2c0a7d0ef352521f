/* data_access.h - the data-access profile a memory profile may carry (LLVM's
 * DataAccessProfData: static data partitioning): sampled accesses to data
 * symbols and to string literals (by content hash), with their source
 * locations, and the symbols and string-literal hashes known to be cold.
 *
 * The order of everything is the order LLVM keeps (insertion order), since
 * the indexed file stores it: the string table (symbol names and file
 * names, each once, in first-use order: LLVM's StrToIndexMap), the records,
 * the known-cold symbols and hashes.  Strings are the profile's interned
 * strings (mp_intern_string).
 *
 * Merging: a record added again by the same input is an error (LLVM: the
 * user must aggregate); added by a later input its access count is added
 * (saturating) and its new locations appended.  Known-cold symbols and
 * hashes are sets.  What more than one input brought is put in a canonical
 * order at the end (mp_dap_sort_canonically).
 */
#ifndef PROFDATA_MODEL_DATA_ACCESS_H
#define PROFDATA_MODEL_DATA_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/hashmap.h"
#include "model.h"

typedef struct mp_dap_loc {
  uint32_t file; /* index in mp_dap.strs */
  uint32_t line;
} mp_dap_loc;

typedef struct mp_dap_record {
  uint64_t id;         /* string literal: its hash; symbol: index in strs */
  uint8_t is_literal;
  uint64_t count;
  mp_dap_loc *locs;
  uint32_t n_locs, cap_locs;
  uint32_t first_input, input; /* the inputs that added it first, last */
} mp_dap_record;

typedef struct mp_dap {
  uint32_t *strs; /* model string ids, LLVM's StrToIndexMap order */
  size_t n_strs, cap_strs;
  mp_map str_index; /* model string id -> index in strs */
  mp_dap_record *recs;
  size_t n_recs, cap_recs;
  mp_map sym_rec, hash_rec; /* symbol string index / hash -> record */
  uint32_t *cold_syms; /* indexes in strs, insertion order, distinct */
  size_t n_cold_syms, cap_cold_syms;
  mp_map cold_sym_set;
  uint64_t *cold_hashes; /* insertion order, distinct */
  size_t n_cold_hashes, cap_cold_hashes;
  mp_map cold_hash_set;
  uint32_t inputs, last_input; /* how many inputs brought some; the last */
} mp_dap;

/* The profile's data-access profile, created empty when missing. */
mp_dap *mp_dap_get(mp_profile *p);
void mp_dap_free(mp_dap *d);
/* Whether `d` (which may be NULL) holds nothing. */
int mp_dap_empty(const mp_dap *d);

/* LLVM's canonical symbol name (InstrProfSymtab::getCanonicalName): cut
 * at the first '.' after a ".__uniq." part, or else at the first '.' that
 * is not the first byte.  Returns the kept length. */
size_t mp_dap_canonical_len(const char *name, size_t len);

/* The index of string `s` in the string table, added at the end if new. */
uint32_t mp_dap_string(mp_profile *p, const char *s, size_t len);

/* Add a sampled record of input p->input: a symbol (name, canonicalized
 * here; not empty) or a string literal (hash).  Returns its index, or -1
 * (with the reason) for an empty name or a record the same input already
 * added.  Locations come after with mp_dap_add_loc. */
long mp_dap_add_symbol(mp_profile *p, const char *name, size_t len,
                       uint64_t count, mp_err *err);
long mp_dap_add_literal(mp_profile *p, uint64_t hash, uint64_t count,
                        mp_err *err);
/* Add location (file, line) to record `rec` (a repeated location of a
 * record merged across inputs is not added twice). */
void mp_dap_add_loc(mp_profile *p, size_t rec, const char *file, size_t len,
                    uint32_t line);

/* Known-cold symbols (canonicalized; -1 for an empty name) and string
 * literal hashes.  LLVM's hash set cannot hold UINT64_MAX (its empty key):
 * it is left out as LLVM leaves it out. */
int mp_dap_add_cold_symbol(mp_profile *p, const char *name, size_t len,
                           mp_err *err);
void mp_dap_add_cold_hash(mp_profile *p, uint64_t hash);

/* With more than one input behind it, put the profile's data-access
 * profile in its canonical order (data_access_order.c); mp_profile_finish
 * calls it. */
void mp_dap_sort_canonically(mp_profile *p);

/* The string of table index i. */
static inline const char *mp_dap_str(const mp_profile *p, const mp_dap *d,
                                     uint32_t i) {
  return mp_string(p, d->strs[i]);
}

#endif
