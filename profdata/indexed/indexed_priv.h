/* indexed_priv.h - what the indexed reader's and writer's files share,
 * private to indexed/: the writer's "view" of a profile (only the stacks
 * and frames the records reference, in first-use order, with their
 * 64-bit ids), the memprof section's writer and reader, and the frame-key
 * table both use.
 */
#ifndef PROFDATA_INDEXED_PRIV_H
#define PROFDATA_INDEXED_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "indexed.h"
#include "common/io.h"
#include "profdata/model/model.h"

typedef struct mp_wview {
  const mp_profile *p;
  uint32_t *stacks;     /* model stack ids in first-use order */
  size_t n_stacks;
  uint32_t *stack_slot; /* model stack id -> view index */
  uint32_t *frames;     /* model frame ids in first-use order */
  size_t n_frames;
  uint32_t *frame_slot; /* model frame id -> view index */
  uint64_t *frame_id;   /* FrameId of each view frame (collision-free) */
  uint64_t *stack_id;   /* CallStackId of each view stack; only computed
                           when asked for (v2 writes them, v3/v4 do not) */
} mp_wview;

int mp_wview_init(mp_wview *v, const mp_profile *p, int want_stack_ids,
                  mp_err *err);
void mp_wview_free(mp_wview *v);

/* Write the memprof section at out->len.  sym_key[i] receives the key under
 * which view frame i is known in this section (its linear id in the frame
 * array for v3/v4, its FrameId for v2), stack_key[i] the key of view stack
 * i (its linear call-stack id, the radix array position records name, for
 * v3/v4, its CallStackId for v2), for the symbolized section. */
int mp_write_memprof(mp_buf *out, const mp_wview *v, const mp_index_opts *o,
                     uint64_t *sym_key, uint64_t *stack_key, mp_err *err);


/* The profile's data-access profile (non-empty) at out->len (dap_io.c). */
void mp_write_dap(mp_buf *out, const mp_profile *p);

/* ---- reading ------------------------------------------------------------ */

/* Which model frame each on-disk frame key (linear id for v3/v4, FrameId
 * for v2) became; sorted by key.  Used to attach the symbolized section;
 * the same table maps call-stack keys (linear call-stack id, CallStackId)
 * to model stacks. */
typedef struct mp_frame_keys {
  uint64_t *keys;
  uint32_t *frames;
  size_t n, cap;
} mp_frame_keys;

void mp_frame_keys_add(mp_frame_keys *k, uint64_t key, uint32_t frame);
void mp_frame_keys_sort(mp_frame_keys *k);
uint32_t mp_frame_keys_find(const mp_frame_keys *k, uint64_t key);
void mp_frame_keys_free(mp_frame_keys *k);

/* Read the memprof section at `off`; everything LLVM owns lies in
 * data[0, end).  *version receives the memprof version, `keys` the frame
 * keys, `stack_keys` the keys of the call stacks the records name. */
int mp_read_memprof(mp_profile *p, const unsigned char *data, size_t end,
                    uint64_t off, mp_frame_keys *keys,
                    mp_frame_keys *stack_keys, unsigned *version, mp_err *err);

/* Read the data-access profile at `off` of data[0, end) (dap_io.c). */
int mp_read_dap(mp_profile *p, const unsigned char *data, size_t end,
                uint64_t off, mp_err *err);

#endif
