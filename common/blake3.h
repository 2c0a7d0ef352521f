/* blake3.h - BLAKE3 (default hash mode, unkeyed), only as far as the
 * indexed writer needs it: the first 8 bytes of the digest as a
 * little-endian u64.  llvm-profdata derives memprof FrameIds and
 * CallStackIds this way; using the same ids makes our files byte-identical
 * to llvm-profdata's for the same input (readers do not need that).
 */
#ifndef PROFDATA_BLAKE3_H
#define PROFDATA_BLAKE3_H

#include <stddef.h>
#include <stdint.h>

uint64_t mp_blake3_u64(const void *data, size_t len);

#endif
