/* roots.h - who held the memory: the `<profile>.roots` file the runtime
 * writes beside its raw profile (MEMPROF_OPTIONS=roots=1), read into
 * memory (docs/roots-format.md).
 *
 * Contexts are named by the raw profile's stack ids, so a report joins the
 * censuses to the contexts of the raw profile they sit beside.  Every list
 * below is owned by the mp_roots and freed by mp_roots_free.
 */
#ifndef PROFDATA_ROOTS_H
#define PROFDATA_ROOTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* A root's kind (docs/roots-format.md, section 5). */
enum { MP_ROOT_GLOBAL = 1, MP_ROOT_DATA = 2, MP_ROOT_THREAD = 3, MP_ROOT_NAMED = 4 };
/* A census's kind (section 4). */
enum { MP_ROOTS_ON_DEMAND = 1, MP_ROOTS_AT_DUMP = 2, MP_ROOTS_AT_EXIT = 3, MP_ROOTS_AT_HIGH = 4 };
/* The versions read; a census of kind MP_ROOTS_AT_HIGH needs version 2,
 * bands version 3. */
#define MP_ROOTS_VERSION_MIN 1
#define MP_ROOTS_VERSION_MAX 3
/* mp_roots_root.flags: reached figures not computed (they are the retained). */
#define MP_ROOT_REACHED_PARTIAL 1u

/* Bytes and blocks of one context; direct_*: only in the unreached list
 * (blocks no other unreached block points to: LeakSanitizer's direct
 * leaks), 0 elsewhere. */
typedef struct mp_roots_ctx {
  uint64_t stack_id;
  uint64_t bytes, blocks;
  uint64_t direct_bytes, direct_blocks;
} mp_roots_ctx;

typedef struct mp_roots_root {
  uint64_t kind, flags;
  uint64_t module; /* 1-based into the census's modules; 0 none */
  uint64_t offset; /* from the module's base (global, data); thread id */
  uint64_t size;
  char *name;      /* symbol or given name; "" none */
  uint64_t reached_bytes, reached_blocks;
  uint64_t retained_bytes, retained_blocks;
  mp_roots_ctx *ctx; /* what it retains, by stack id */
  size_t n_ctx;
} mp_roots_root;

/* A band (section 4.1): a set of two roots or more, the blocks they
 * reach and no other root (whose reached figures were computed) does. */
typedef struct mp_roots_band {
  size_t *roots; /* indices into the census's roots, increasing */
  size_t n_roots;
  uint64_t bytes, blocks;
} mp_roots_band;

typedef struct mp_roots_census {
  uint64_t kind, t_ms;
  uint64_t heap_bytes, heap_blocks, scanned_bytes;
  char **modules;
  size_t n_modules;
  mp_roots_root *roots;
  size_t n_roots;
  uint64_t shared_bytes, shared_blocks; /* reached by several roots */
  mp_roots_ctx *shared;
  size_t n_shared;
  mp_roots_band *bands; /* the largest sets sharing blocks (version 3) */
  size_t n_bands;
  uint64_t other_bytes, other_blocks; /* shared blocks of no band listed */
  uint64_t unreached_bytes, unreached_blocks, direct_bytes, direct_blocks;
  mp_roots_ctx *unreached;
  size_t n_unreached;
} mp_roots_census;

typedef struct mp_roots {
  uint64_t version;
  uint64_t pid;
  uint64_t raw_bytes; /* size of the raw profile it was written with; 0 unknown */
  size_t raw_bytes_at;
  mp_roots_census *census; /* in the order they were taken */
  size_t n_census;
} mp_roots;

/* Parses a whole roots file held in memory; `name` appears in messages
 * (which name the file and the offset of the first bad byte).  Returns 0,
 * or -1 with *err set and *out left empty. */
int mp_roots_parse(const char *name, const uint8_t *data, size_t len, mp_roots *out,
                   mp_err *err);
int mp_roots_read(const char *path, mp_roots *out, mp_err *err);
/* 1 if the bytes start like a roots file (its magic). */
int mp_is_roots(const void *data, size_t len);
/* "<raw path>.roots", malloc'd. */
char *mp_roots_path_for(const char *raw_path);
/* Refuses a roots file written for a raw profile of another size (as
 * mp_timeline_match). */
int mp_roots_match(const mp_roots *r, const char *name, uint64_t raw_size, mp_err *err);
/* How a report names a root: "cache (app)", "app+0x4010", "thread 1234",
 * "my_cache (named)"; into buf[cap]. */
void mp_roots_label(const mp_roots_census *c, const mp_roots_root *r, char *buf, size_t cap);
void mp_roots_free(mp_roots *r);

#endif
