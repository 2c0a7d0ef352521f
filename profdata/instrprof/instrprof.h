/* instrprof.h - the instrumentation (PGO) profile that travels with the
 * memory profile in one indexed file: the data of LLVM's InstrProfWriter
 * (functions by PGO name, one record per structural hash with counters,
 * MC/DC bitmap bytes and value-profile sites, the inputs' binary ids and
 * profile-kind flags) and LLVM's rules for merging it.
 *
 * Readers: raw files of clang's -fprofile-generate / -fprofile-instr-
 * generate runtimes (instrprof_raw.c) and the function table of indexed
 * files (instrprof_index.c).  Writer: instrprof_write.c.  Formats:
 * docs/instrprof-format.md.
 *
 * Merging follows llvm-profdata (InstrProfWriter::addRecord): a record is
 * keyed by (name, hash), so a function whose hash differs between inputs
 * keeps one record per hash; records of the same key merge counters by
 * saturating weighted sums, bitmap bytes by OR, value sites by target
 * value, and each site then keeps its 255 largest counts.  Disagreements
 * (counter or site counts, bitmap sizes, overflow) are reported through
 * the warning handler in llvm-profdata's words and resolved as it does.
 * Unlike the memory profile, the result depends on input order where LLVM's
 * does (value sites over 255 targets, records of one name whose hashes
 * collide in LLVM's small map).
 */
#ifndef PROFDATA_INSTRPROF_H
#define PROFDATA_INSTRPROF_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/hashmap.h"
#include "common/io.h"

/* Variant flags: the high bits of a raw or indexed version word. */
#define MP_IVAR_LOOP_ENTRIES (1ULL << 55)
#define MP_IVAR_IR (1ULL << 56)
#define MP_IVAR_CSIR (1ULL << 57)
#define MP_IVAR_ENTRY_FIRST (1ULL << 58)
#define MP_IVAR_DBG_CORRELATE (1ULL << 59)
#define MP_IVAR_BYTE_COVERAGE (1ULL << 60)
#define MP_IVAR_FUNC_ENTRY_ONLY (1ULL << 61)
#define MP_IVAR_MEMPROF (1ULL << 62)
#define MP_IVAR_TEMPORAL (1ULL << 63)
/* The flags an indexed file carries over from its inputs (LLVM drops the
 * debug-info-correlation bit). */
#define MP_IVAR_INDEXED_MASK (0xffULL << 55 & ~MP_IVAR_DBG_CORRELATE)

/* Value kinds: indirect call targets (function name MD5s), memory
 * intrinsic sizes, vtable targets. */
enum { MP_IPVK_ICALL, MP_IPVK_MEMOP, MP_IPVK_VTABLE, MP_IPVK_NUM };
#define MP_IVAL_MAX_PER_SITE 255 /* INSTR_PROF_MAX_NUM_VAL_PER_SITE */
/* Counts above this are clamped (getInstrMaxCountValue); the two above it
 * mark pseudo-count records (hot, warm). */
#define MP_ICOUNT_MAX (UINT64_MAX - 2)

typedef struct mp_ivalue {
  uint64_t value, count;
} mp_ivalue;

typedef struct mp_isite {
  mp_ivalue *v;
  uint32_t n;
} mp_isite;

/* One (name, hash) record.  Arrays are owned. */
typedef struct mp_irecord {
  uint64_t hash;
  uint64_t *counts;
  uint8_t *bitmap;
  uint32_t n_counts, n_bitmap;
  uint32_t n_sites[MP_IPVK_NUM];
  mp_isite *sites[MP_IPVK_NUM];
  uint32_t next; /* next record of the same function, UINT32_MAX: none */
} mp_irecord;

typedef struct mp_ifunc {
  size_t name_off; /* into mp_instr.names */
  uint32_t name_len;
  uint32_t first, last; /* its records, in insertion order */
  uint64_t md5;         /* of the name: the indexed table's hash */
} mp_ifunc;

typedef struct mp_instr {
  uint64_t variant; /* union of the inputs' variant flags */
  int has_kind;     /* some instrumentation input was read */
  mp_ifunc *funcs;
  size_t n_funcs, cap_funcs;
  mp_irecord *recs;
  size_t n_recs, cap_recs;
  char *names;
  size_t names_len, names_cap;
  mp_map func_index; /* by name */
  uint8_t **ids;     /* binary ids, as read */
  uint32_t *id_len;
  size_t n_ids, cap_ids;
  uint32_t hinted; /* error codes whose hint was printed */
} mp_instr;

mp_instr *mp_instr_new(void);
void mp_instr_free(mp_instr *ip);
/* The instrumentation profile that travels with memory profile `p`
 * (model.h), created empty if missing. */
struct mp_profile;
mp_instr *mp_profile_instr(struct mp_profile *p);

/* Where merge warnings go (one line each, no newline); default: stderr
 * as "memprof-profdata: warning: MSG".  Process-wide, like the OOM
 * handler. */
typedef void (*mp_instr_warn_fn)(const char *msg);
void mp_instr_set_warn_handler(mp_instr_warn_fn fn);

/* Fold an input's variant flags into the profile's; fails (as LLVM does)
 * for function-entry-only coverage mixed with block counts. */
int mp_instr_add_kind(mp_instr *ip, uint64_t variant, mp_err *err);

/* Add record `r` of function `name` from input `src` with weight >= 1:
 * moved in when its (name, hash) is new, else merged into the existing
 * record and freed.  `r` is left empty either way. */
void mp_instr_add(mp_instr *ip, const char *src, const char *name,
                  size_t name_len, mp_irecord *r, uint64_t weight);
/* The same for a reader that knows the name's MD5 already. */
void mp_instr_add_md5(mp_instr *ip, const char *src, const char *name,
                      size_t name_len, uint64_t md5, mp_irecord *r,
                      uint64_t weight);
/* The same for a function already in the profile (mp_instr_find_md5). */
void mp_instr_add_to(mp_instr *ip, const char *src, uint32_t func,
                     mp_irecord *r, uint64_t weight);
/* The function whose name has this MD5, or UINT32_MAX: lets a raw reader
 * skip the name table when every function it names is known. */
uint32_t mp_instr_find_md5(const mp_instr *ip, uint64_t md5);

/* Room for a profile of `records` records (of as many functions) and
 * `name_bytes` of names in all: a reader's first input then fills arrays
 * allocated once instead of doubling them; inputs of the same program
 * after it need no more. */
void mp_instr_reserve(mp_instr *ip, uint64_t records, uint64_t name_bytes);
void mp_instr_add_binary_id(mp_instr *ip, const uint8_t *id, size_t len);

static inline const char *mp_ifunc_name(const mp_instr *ip,
                                        const mp_ifunc *f) {
  return ip->names + f->name_off;
}

/* Free a record's arrays (for readers that give up on one). */
void mp_irecord_clear(mp_irecord *r);

/* The binary-id list of raw and indexed files: entries of u64 length
 * (not 0), the bytes, zero padding to 8.  `what` names it in messages. */
int mp_instr_read_binary_ids(mp_instr *ip, const unsigned char *d,
                             size_t size, uint64_t file_off, mp_err *err);

/* ValueProfData (shared by raw and indexed files) at d[0, avail):
 * validated as LLVM's checkIntegrity does, then its sites are added to
 * `r` with values passed through remap (NULL: kept).  *size receives its
 * TotalSize. */
typedef uint64_t (*mp_iremap_fn)(const void *ctx, uint32_t kind,
                                 uint64_t value);
int mp_instr_read_values(mp_irecord *r, const unsigned char *d, size_t avail,
                         mp_iremap_fn remap, const void *ctx, uint32_t *size,
                         mp_err *err);

/* LLVM's name-string encoding (instrprof_names.c): the names joined by
 * \x01 as one chunk of ULEB uncompressed length, ULEB compressed length
 * (0: plain) and the bytes, zlib-compressed at level 9 when `compress`.
 * Names must not contain \x01. */
void mp_names_encode(const char *const *names, const size_t *lens, size_t n,
                     int compress, mp_buf *out);
/* Decode the chunks in d[pos, end) (zero padding may follow each), handing
 * each chunk's bytes (names separated by \x01) to fn.  `what` names the
 * table in messages. */
typedef void (*mp_names_fn)(void *ctx, const char *s, size_t n);
int mp_names_decode(const unsigned char *d, size_t pos, size_t end,
                    const char *what, mp_names_fn fn, void *ctx, mp_err *err);

/* ---- reading ------------------------------------------------------------ */

/* A raw instrprof file (any byte order or width: the reader says which it
 * refuses). */
int mp_is_instr_raw(const void *data, size_t len);

/* Read a raw file (instrprof_raw.c) or the instrumentation part of an
 * indexed file whose LLVM data ends at `end` (instrprof_index.c) into `ip`,
 * every record weighted by `weight` (>= 1); `src` names the input in merge
 * warnings. */
int mp_read_instr_raw(mp_instr *ip, const char *src, const void *data,
                      size_t len, uint64_t weight, mp_err *err);
int mp_read_instr_indexed(mp_instr *ip, const char *src,
                          const unsigned char *data, size_t end,
                          uint64_t weight, mp_err *err);

/* ---- writing (instrprof_write.c) ---------------------------------------- */

/* The profile summary (and the context-sensitive one when the CSIR flag is
 * set) and the function table, at out->len; `ip` may be NULL (no
 * instrumentation data: zero summary, empty table).  `sparse` leaves out
 * functions whose counters and bitmap bytes are all zero.  Returns the
 * table offset for the header's HashOffset, 0 on failure. */
uint64_t mp_instr_write(mp_buf *out, const mp_instr *ip, int sparse,
                        mp_err *err);

/* The binary-id section: u64 size, the ids sorted and deduplicated. */
void mp_instr_write_binary_ids(mp_buf *out, const mp_instr *ip);

/* `show`'s lines about the instrumentation part ("# ..." YAML comments):
 * the summary llvm-profdata's show prints. */
void mp_instr_summary_text(const mp_instr *ip, mp_buf *out);

#endif
