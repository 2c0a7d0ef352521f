/* rt_frames.h - stacks printed as LLVM's runtime prints them
 * (rt_frames.c). */
#ifndef MEMPROF_RT_FRAMES_H
#define MEMPROF_RT_FRAMES_H

#include "runtime/base/rt_sys.h"

/* Stacks as LLVM prints them (rt_frames.c): "Stack for id N:" and the
 * frames of each of ids[0..n); or the frames of pcs[0..k), with `where`
 * (if not NULL) given the first call site as "file:line:col in function". */
RT_HIDDEN void rt_frames_print_ids(rt_buf *b, const uint32_t *ids, size_t n);
RT_HIDDEN void rt_frames_print_pcs(rt_buf *b, const uintptr_t *pcs, uint32_t k,
                                   rt_buf *where);

#endif
