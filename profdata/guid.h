/* guid.h - LLVM's function GUIDs, which records and frames are keyed by. */
#ifndef PROFDATA_GUID_H
#define PROFDATA_GUID_H

#include <stddef.h>
#include <stdint.h>

/* The part of `name` LLVM hashes: without a final ".llvm.N" component, then
 * without a final ".part.N" component (LLVM's getCanonicalFnName).  Returns
 * the kept length. */
size_t mp_guid_canon_len(const char *name, size_t len);

/* LLVM's function GUID: the first 8 bytes (little-endian) of the MD5 of the
 * name's canonical part. */
uint64_t mp_guid_of_name(const char *name, size_t len);

#endif
