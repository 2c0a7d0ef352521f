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

/* Serialize `p`; returns -1 (with a message) for option combinations LLVM
 * cannot read (e.g. memprof v4 with index version < 12). */
int mp_write_indexed(const mp_profile *p, const mp_index_opts *o, mp_buf *out,
                     mp_err *err);

/* Read an indexed file (ours or llvm-profdata's, memprof v2-v4) into `p`,
 * including our symbolized section when present. */
int mp_read_indexed(mp_profile *p, const void *data, size_t len, mp_err *err);

#endif
