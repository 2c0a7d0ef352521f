/* indexed.h - LLVM's indexed profile (the file clang's
 * -fmemory-profile-use reads), memprof part only, plus our symbolized
 * section stored after LLVM's sections and found through a trailer at the
 * end of the file (docs/indexed-format.md, docs/symbolized-section.md).
 */
#ifndef PROFDATA_INDEXED_H
#define PROFDATA_INDEXED_H

#include <stddef.h>

#include "error.h"
#include "io.h"
#include "model.h"

typedef struct mp_index_opts {
  unsigned index_version;   /* 11, 12 (default) or 13 */
  unsigned memprof_version; /* 2, 3 (default) or 4 */
  int full_schema;          /* all 27 MIB fields instead of the hot/cold 4 */
  int symbolized_section;   /* append our section when the profile has syms */
} mp_index_opts;

#define MP_INDEX_OPTS_DEFAULT {12, 3, 0, 1}

int mp_is_indexed(const void *data, size_t len);

/* Serialize `p` into the empty buffer `out` (offsets in the file are
 * absolute, so the file must start at out->data).  With the same record
 * insertion order the bytes equal llvm-profdata-22's (BLAKE3 ids, LLVM's
 * table order).  Returns -1 (with a message) for option combinations LLVM
 * cannot read (memprof v4 with index version < 12) and unknown versions. */
int mp_write_indexed(const mp_profile *p, const mp_index_opts *o, mp_buf *out,
                     mp_err *err);

/* Read an indexed file (index versions 8-13, memprof v2-v4, any schema;
 * ours or llvm-profdata's) into `p`, attaching the symbol info of our
 * symbolized section when its trailer is present.  Records are added in the
 * file's hash-table order.  Untrusted input: every offset and count is
 * checked; failures say what is wrong and at which file offset.  Not kept:
 * AccessHistogramSize (the model stores it only with histogram contents,
 * which indexed files never have) and a v4 data-access profile. */
int mp_read_indexed(mp_profile *p, const void *data, size_t len, mp_err *err);

#endif
