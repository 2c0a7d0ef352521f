/* rt_sample.h - allocation sampling (sample_interval): which allocations
 * are recorded, and the weight a recorded one carries in the estimates.
 *
 * Each thread counts down the bytes it allocates; an allocation that
 * brings the count to zero or below is recorded and a new count is drawn
 * from an exponential distribution of mean R = sample_interval (the
 * countdown of jemalloc's and tcmalloc's heap profilers).  The count being
 * memoryless, every allocation of s bytes is recorded with probability
 * 1 - exp(-s/R) whatever came before it, so a recorded block that weighs
 * 1 / (1 - exp(-s/R)) gives unbiased totals (rt_sample_weight).  With R = 0
 * (the default) every allocation is recorded and weighs 1.
 *
 * The check an allocation makes is one subtract and one branch on a
 * thread-local count; what follows the branch is out of line.  A thread
 * seeds its generator at its first drawn count, and again after a fork
 * (rt_sample_fork_child bumps the epoch, so the child's counts are its
 * own).  Everything here is async-signal-safe: a handler's allocation
 * takes the same path and at worst loses one update of the count. */
#ifndef MEMPROF_RT_SAMPLE_H
#define MEMPROF_RT_SAMPLE_H

#include <stdint.h>

#include "runtime/base/rt_internal.h"

/* The stack ref of a block that is not recorded (block_meta, rt_large.c):
 * no permanent block sits at the last ref, it has no room for an entry. */
#define RT_UNSAMPLED 0xFFFFFFFFu

/* Bytes the calling thread may still allocate before the next recorded
 * allocation. */
RT_HIDDEN extern __thread int64_t rt_sample_left __attribute__((tls_model("initial-exec")));
/* R in bytes; 0 records every allocation (set by init from the options). */
RT_HIDDEN extern uint64_t rt_sample_interval;

/* By init, after the options; every_block: the timeline needs every
 * allocation's context (sampling is then off). */
RT_HIDDEN void rt_sample_init(int every_block);
RT_HIDDEN void rt_sample_fork_child(void);  /* the child draws its own counts */
/* The count ran out (or was never drawn): 1 if this allocation is recorded. */
RT_HIDDEN int rt_sample_hit(uint64_t size);

/* 1 if an allocation of `size` bytes is to be recorded.  A block of 0
 * bytes counts as 1 (it can be recorded, and its weight is finite). */
static inline int rt_sample_take(uint64_t size) {
  int64_t left = rt_sample_left - (int64_t)(size | (size == 0));
  if (RT_LIKELY(left > 0)) {
    rt_sample_left = left;
    return 0;
  }
  if (RT_LIKELY(!__atomic_load_n(&rt_sample_interval, __ATOMIC_RELAXED)))
    return 1; /* every allocation: the count stays at 0 */
  return rt_sample_hit(size);
}

/* The weight of a recorded block of `size` bytes: 1 / P(recorded). */
RT_HIDDEN double rt_sample_weight(uint64_t size);

#endif
