/* radix.h - the call-stack radix tree of memprof v3/v4: a u32 array in
 * which every call stack is a length word followed by its linear frame ids
 * leaf to root, and stacks share their root-side suffixes through forward
 * jumps (a negative element -k means "continue k elements further on").
 * docs/indexed-format.md section "Radix tree" is the normative description.
 */
#ifndef PROFDATA_RADIX_H
#define PROFDATA_RADIX_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct mp_radix_stack {
  const uint32_t *frames; /* linear frame ids (or mapped ids), leaf first */
  uint32_t len;
} mp_radix_stack;

/* Encode `n` distinct stacks with LLVM's builder.  count[f] is how often
 * linear frame f occurs over all stacks and key[f] its 64-bit frame id;
 * they only steer sharing (and byte-identity with llvm-profdata).  On
 * return *arr (malloc'd, *n_arr elements) holds the array and pos[i] the
 * linear call-stack id of stacks[i]. */
void mp_radix_build(const mp_radix_stack *stacks, size_t n,
                    const uint64_t *count, const uint64_t *key,
                    uint32_t **arr, size_t *n_arr, uint32_t *pos);

/* Element ids of stacks that are not linear frame ids yet (the writer
 * hands over the model's stacks as they are, rather than copying every
 * element): element e stands for linear frame map[e], e < n_ids.  map NULL:
 * elements are linear frame ids already.  Linear frame ids are < n_frames. */
typedef struct mp_radix_map {
  const uint32_t *map;
  uint32_t n_ids;
  uint32_t n_frames;
} mp_radix_map;

/* The most elements the array of these stacks can have (no sharing). */
size_t mp_radix_max_len(const mp_radix_stack *stacks, size_t n);
/* mp_radix_build over stacks whose elements `m` maps to linear frames,
 * straight into `out` (little-endian u32s, any alignment, room for
 * mp_radix_max_len elements), so that a writer needs no second copy of
 * the array; returns its length in elements. */
size_t mp_radix_build_into(const mp_radix_stack *stacks, size_t n,
                           const mp_radix_map *m, const uint64_t *count,
                           const uint64_t *key, unsigned char *out,
                           uint32_t *pos);

/* Decode the stack at linear id `at` of the n-element array at `bytes`
 * (little-endian u32s, any alignment).  Frame ids must be < n_frames.
 * Writes up to `cap` ids leaf first into out and returns the stack length,
 * or -1 with a message (id, jump or frame out of range, length beyond the
 * array, stack longer than cap).  Terminates on any input: positions only
 * move forward and are checked against n. */
long mp_radix_decode(const unsigned char *bytes, size_t n, uint64_t at,
                     uint64_t n_frames, uint32_t *out, size_t cap,
                     mp_err *err);

#endif
