/* indexed.h - LLVM's indexed profile (the file clang's
 * -fmemory-profile-use and -fprofile-use read): the memprof part, the
 * instrumentation part (instrprof.h), plus our symbolized
 * section stored after LLVM's sections and found through a trailer at the
 * end of the file (docs/indexed-format.md, docs/symbolized-section.md).
 */
#ifndef PROFDATA_INDEXED_H
#define PROFDATA_INDEXED_H

#include <stddef.h>

#include "common/error.h"
#include "common/io.h"
#include "profdata/model/model.h"

typedef struct mp_index_opts {
  unsigned index_version;   /* 11, 12 (default) or 13 */
  unsigned memprof_version; /* 2, 3 (default) or 4 */
  int full_schema;          /* all 27 MIB fields instead of the hot/cold 4 */
  int symbolized_section;   /* append our section when the profile has syms */
  int sparse; /* leave out functions whose counters are all zero */
} mp_index_opts;

#define MP_INDEX_OPTS_DEFAULT {12, 3, 0, 1, 0}

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
 * which indexed files never have).  A v4 data-access profile is kept. */
int mp_read_indexed(mp_profile *p, const void *data, size_t len, mp_err *err);
/* The same for input `src` of a merge (named in warnings), its
 * instrumentation counts weighted by `weight` (>= 1).  The instrumentation
 * part (function table, binary ids) goes to mp_profile_instr(p); a file
 * without the memory-profile flag brings only that. */
int mp_read_indexed_input(mp_profile *p, const void *data, size_t len,
                          const char *src, uint64_t weight, mp_err *err);

#endif
