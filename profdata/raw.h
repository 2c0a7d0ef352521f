/* raw.h - reading LLVM raw memory profiles (v3, v4, v5; several dumps per
 * file) into the model, symbolizing every PC with the symbolizer.
 *
 * The raw file is validated completely before anything is added to the
 * profile: a damaged file is refused whole, with a message saying what is
 * wrong and where (byte offset).  Records are built as LLVM's
 * RawMemProfReader does (llvm-indexed.md section 1.5): alloc sites in the
 * record of the leaf function and of each inline parent up to the first
 * physical frame; call sites for every other PC; PCs that do not symbolize
 * or fall in a memprof runtime's files are dropped.
 */
#ifndef PROFDATA_RAW_H
#define PROFDATA_RAW_H

#include <stddef.h>

#include "error.h"
#include "model.h"
#include "symbolizer.h"

int mp_is_raw(const void *data, size_t len);

/* Read one raw file (all its dumps) into `p`.  `sym` holds the profiled
 * binaries; a PC is symbolized in the module whose build id matches its
 * segment.  `name` is used in messages only. */
int mp_read_raw(mp_profile *p, const char *name, const void *data, size_t len,
                msym_ctx *sym, mp_err *err);

#endif
