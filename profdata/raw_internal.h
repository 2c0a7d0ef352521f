/* raw_internal.h - what raw.c (parsing and validation) hands to
 * raw_build.c (symbolization and record building).  Private to those two.
 *
 * After raw_parse succeeds every offset and count below has been checked
 * against the file, so raw_build reads without further bounds checks.
 */
#ifndef PROFDATA_RAW_INTERNAL_H
#define PROFDATA_RAW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "model.h"
#include "symbolizer.h"

typedef struct raw_dump {
  uint64_t at; /* file offset of the dump header */
  uint32_t version;
  const unsigned char *segs; /* n_segs packed mp_raw_segment */
  uint64_t n_segs;
  const unsigned char *mibs; /* first MIB entry (its stack id) */
  uint64_t n_mibs;
} raw_dump;

/* One distinct stack id of the file (the first dump that lists it wins;
 * repeats were checked to carry identical PCs). */
typedef struct raw_stack {
  uint64_t id;
  const unsigned char *pcs; /* n_pcs u64, leaf first */
  uint64_t n_pcs;
  uint32_t dump;            /* whose segments translate the PCs */
  uint32_t state;           /* RAW_STACK_* */
  uint32_t model_stack;     /* the symbolized call stack, when LIVE */
} raw_stack;

enum { RAW_STACK_NEW, RAW_STACK_LIVE, RAW_STACK_DROPPED };

/* Open-addressing map u64 -> u32 (value UINT32_MAX = absent). */
typedef struct raw_map {
  uint64_t *keys;
  uint32_t *vals;
  size_t mask, used;
} raw_map;

void raw_map_init(raw_map *m);
void raw_map_free(raw_map *m);
uint32_t raw_map_get(const raw_map *m, uint64_t key);
void raw_map_put(raw_map *m, uint64_t key, uint32_t val);

typedef struct raw_file {
  const char *name;
  const unsigned char *data;
  size_t len;
  raw_dump *dumps;
  size_t n_dumps;
  raw_stack *stacks;
  size_t n_stacks, cap_stacks;
  raw_map stack_index; /* stack id -> index into stacks */
} raw_file;

static inline uint64_t raw_u64(const unsigned char *p) {
  uint64_t v;
  __builtin_memcpy(&v, p, 8);
  return v;
}

/* Bytes of one MIB entry (stack id + MIB + histogram) in `version`. */
size_t raw_mib_entry_size(uint32_t version, const unsigned char *entry);

/* Symbolize the validated file and add its records to `p`. */
int raw_build(raw_file *f, mp_profile *p, msym_ctx *sym, mp_err *err);

#endif
