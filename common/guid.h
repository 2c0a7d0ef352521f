/* guid.h - LLVM's function GUIDs, which records and frames are keyed by,
 * and the plain name MD5 that instrumentation profiles use. */
#ifndef PROFDATA_GUID_H
#define PROFDATA_GUID_H

#include <stddef.h>
#include <stdint.h>

/* The part of `name` LLVM hashes: without a final ".llvm.N" component, then
 * without a final ".part.N" component (LLVM's getCanonicalFnName).  Returns
 * the kept length. */
size_t mp_guid_canon_len(const char *name, size_t len);

/* LLVM's MD5Hash: the first 8 bytes (little-endian) of the MD5 of `len`
 * bytes.  Instrumentation profiles key functions by it (NameRef, and the
 * hash of the indexed function table). */
uint64_t mp_md5_low(const void *data, size_t len);

/* LLVM's function GUID: the first 8 bytes (little-endian) of the MD5 of the
 * name's canonical part. */
uint64_t mp_guid_of_name(const char *name, size_t len);

#endif
