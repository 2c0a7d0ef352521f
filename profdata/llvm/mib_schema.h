/* mib_schema.h - the indexed format's MIB schema: which MemInfoBlock fields
 * a file stores (by LLVM's Meta tag) and how one MIB is packed under it.
 * Everything is expanded from include/MIBDef.inc.
 */
#ifndef PROFDATA_MIB_SCHEMA_H
#define PROFDATA_MIB_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "common/io.h"
#include "include/internal/memprof_format.h"

/* LLVM's reader refuses more than this many tags (Meta::Size). */
#define MP_SCHEMA_MAX_TAGS 28u

typedef struct mp_schema {
  uint32_t n;
  uint8_t tags[MP_SCHEMA_MAX_TAGS];
} mp_schema;

/* AllocCount, TotalSize, TotalLifetime, TotalLifetimeAccessDensity: the
 * fields clang uses (llvm-profdata's default). */
void mp_schema_hot_cold(mp_schema *s);
/* Every field, tags 1..27 in order (--memprof-full-schema). */
void mp_schema_full(mp_schema *s);

/* Bytes of one field (4 or 8), 0 for an unknown tag. */
unsigned mp_mib_tag_width(unsigned tag);
/* Bytes of one MIB under the schema. */
size_t mp_schema_mib_size(const mp_schema *s);

/* u64 count, then count u64 tags. */
void mp_schema_write(mp_buf *out, const mp_schema *s);
/* Pack the schema's fields of `m`.  AccessHistogram (a pointer in LLVM's
 * runtime) is written as 0: indexed files never carry histogram contents. */
void mp_mib_write(mp_buf *out, const mp_schema *s, const mpf_mib *m);
/* Unpack mp_schema_mib_size(s) bytes at `p` (the caller checked they are
 * there); fields not in the schema are 0. */
void mp_mib_read(const unsigned char *p, const mp_schema *s, mpf_mib *m);

#endif
