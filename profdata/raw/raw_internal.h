/* raw_internal.h - what the raw reader's files share, private to raw/:
 * raw.c's validated file (parsing and validation) as raw_keys.c (stack
 * keys by module), raw_build.c (symbolization, stacks) and raw_mibs.c
 * (the MIBs) read it.
 *
 * After raw_parse succeeds every offset and count below has been checked
 * against the file, so raw_build reads without further bounds checks.
 */
#ifndef PROFDATA_RAW_INTERNAL_H
#define PROFDATA_RAW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "include/internal/memprof_format.h"
#include "profdata/model/model.h"
#include "raw.h"
#include "symbolizer/symbolizer.h"

typedef struct raw_dump {
  uint64_t at; /* file offset of the dump header */
  uint32_t version;
  const unsigned char *segs; /* n_segs packed mpf_raw_segment */
  uint64_t n_segs;
  const unsigned char *mibs; /* first MIB entry (its stack id) */
  uint64_t n_mibs;
  uint32_t *mib_stack; /* per MIB: index into raw_file.stacks */
  /* the note's temporary allocations: n_temps (stack id, count) pairs */
  const unsigned char *temps;
  uint64_t n_temps;
} raw_dump;

/* One distinct stack id of the file (the first dump that lists it wins;
 * repeats were checked to carry identical PCs). */
typedef struct raw_stack {
  uint64_t id;
  const unsigned char *pcs; /* n_pcs u64, leaf first */
  uint64_t n_pcs;
  uint64_t hash, hash2;     /* of its key: two independent hashes
                               (raw_keys.c, stack_cache.h) */
  uint64_t key_off;         /* into raw_file.keys */
  uint32_t key_len;         /* u32 elements */
  uint32_t dump;            /* whose segments translate the PCs */
  uint32_t state;           /* RAW_STACK_* */
  uint32_t ent;             /* its entry in the reader's stack cache, when
                               LIVE (raw_build.c) */
  uint32_t in_library;      /* its leaf PC is in no given binary (in none,
                               or in a library found by build id): the
                               block was allocated inside a library
                               (printf's buffer) */
} raw_stack;

enum { RAW_STACK_NEW, RAW_STACK_LIVE, RAW_STACK_DROPPED };

/* A segment of a dump whose build id is a module's. */
typedef struct seg_ref {
  uint64_t start, end;
  uint64_t base; /* run-time address of the module's exec_vaddr */
  size_t module; /* index into raw_file.mods */
} seg_ref;

/* A call site to add once the file's alloc sites are in (raw_mibs.c). */
typedef struct pending_call {
  uint64_t guid;
  uint32_t stack;
} pending_call;

typedef struct raw_file {
  const char *name;
  const unsigned char *data;
  size_t len;
  raw_dump *dumps;
  size_t n_dumps;
  raw_stack *stacks;
  size_t n_stacks, cap_stacks;
  mp_map stack_index; /* stack id -> index into stacks */
  /* the reader's modules (read only) */
  msym_ctx *sym;
  const msym_module *const *mods;
  size_t n_mods;
  size_t n_given; /* mods[n_given..] were found by build id, not given */
  /* raw_keys.c */
  seg_ref **segs; /* per dump: the segments whose build id has a module */
  size_t *n_segs;
  size_t *last_seg; /* per dump: the segment that matched last */
  uint32_t *keys;
  /* raw_build.c, for raw_mibs.c */
  pending_call *calls;
  size_t n_calls, cap_calls;
  size_t n_new; /* stacks the reader's cache did not know yet */
  /* the runtime's notes (memprof_format.h), over all dumps: each dump's
   * sampling interval (0 without a note) */
  mp_intervals intervals;
  int uninstrumented;
  /* the first dump's first path: the executable (NULL: none) */
  const char *program;
  size_t program_len;
} raw_file;

/* Key elements (raw_keys.c): see there for the layout. */
#define KEY_ESCAPE UINT32_MAX
#define KEY_MAX_PER_PC 4

static inline uint64_t raw_u64(const unsigned char *p) {
  uint64_t v;
  __builtin_memcpy(&v, p, 8);
  return v;
}

/* Start fetching [p, p+n) (the cache lines it spans). */
static inline void raw_prefetch_span(const void *p, size_t n) {
  const char *c = p;
  for (size_t i = 0; i < n; i += 64) __builtin_prefetch(c + i);
  if (n) __builtin_prefetch(c + n - 1);
}

/* MIB entry sizes: inline, as every MIB of every file is stepped over
 * three times (validating, matching stacks, building). */
static inline size_t mib_fixed_size(uint32_t version) {
  return 8 + (version == 3 ? MPF_MIB_SIZE_V3 : MPF_MIB_SIZE_V4);
}

static inline size_t hist_entry_size(uint32_t version) {
  return version == 5 ? 2 : 8;
}

static inline uint32_t mib_hist_size(uint32_t version,
                                     const unsigned char *entry) {
  if (version == 3) return 0;
  uint32_t n;
  __builtin_memcpy(&n, entry + 8 + offsetof(mpf_mib, AccessHistogramSize), 4);
  return n;
}

/* Bytes of one MIB entry (stack id + MIB + histogram) in `version`. */
static inline size_t raw_mib_entry_size(uint32_t version,
                                        const unsigned char *entry) {
  return mib_fixed_size(version) +
         (size_t)mib_hist_size(version, entry) * hist_entry_size(version);
}

/* Match segments to modules and key every stack of the validated file
 * (raw_keys.c); needs f->sym, f->mods, f->n_mods. */
int raw_prepare_keys(raw_file *f, mp_err *err);
void raw_keys_free(raw_file *f);

/* The reader's modules, for raw_prepare_keys. */
void raw_reader_modules(const mp_raw_reader *r, msym_ctx **sym,
                        const msym_module *const **mods, size_t *n_mods,
                        size_t *n_given);

/* Symbolize the keyed file's stacks into the reader's profile and stack
 * cache (raw_build.c), reusing what earlier files already resolved: each
 * stack of the file ends LIVE (its cache entry in ent) or DROPPED, and the
 * call sites it brings are queued in f->calls. */
int raw_build_stacks(raw_file *f, mp_raw_reader *r, mp_err *err);

/* What adding a file's MIBs (raw_mibs.c) works on: the profile's records
 * and the refs of the cache entries, nothing else of the reader. */
typedef struct raw_mib_ctx {
  mp_profile *p;
  struct stack_cache *cache;
  uint64_t *hist; /* scratch: one decoded histogram */
  size_t cap_hist;
} raw_mib_ctx;

/* Add the MIBs of a file whose stacks raw_build_stacks resolved, then its
 * queued call sites, to the profile's records. */
void raw_add_mibs(raw_file *f, raw_mib_ctx *x);
raw_mib_ctx *raw_reader_mib_ctx(mp_raw_reader *r);

#endif
