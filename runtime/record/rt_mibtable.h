/* rt_mibtable.h - one MIB per allocation context, merged at every free
 * (rt_mibtable.c): the entry each stack depot node carries, the block as
 * the table sees it, the table's locks and walks. */
#ifndef MEMPROF_RT_MIBTABLE_H
#define MEMPROF_RT_MIBTABLE_H

#include "include/internal/memprof_format.h"
#include "runtime/base/rt_internal.h"

typedef struct rt_block {
  uintptr_t p;
  uint64_t size;
  /* stack: a ref (see rt_stack_intern), or RT_UNSAMPLED (rt_sample.h) for
   * a block sampling left unrecorded: no stack, time or cpu, no entry */
  uint32_t stack, alloc_ts, alloc_cpu;
} rt_block;
/* A block is live while RT_LIVE_BIT is set in its state word; the one
 * caller that clears it (free or fork/dump bookkeeping) owns the death. */
#define RT_LIVE_BIT 0x80000000u
static inline int rt_claim_live(uint32_t *state) {
  return (__atomic_fetch_and(state, ~RT_LIVE_BIT, __ATOMIC_ACQ_REL) & RT_LIVE_BIT) != 0;
}
/* At free: builds the block's MIB and merges it, clearing RT_LIVE_BIT in
 * *live under the table lock.  Returns 0 if the block was not live (double free). */
RT_HIDDEN int rt_mib_on_free(const rt_block *b, uint32_t *live, uint64_t stamp);
/* One more temporary block (rt_heap.c) for the context `stack`, after its
 * rt_mib_on_free. */
RT_HIDDEN void rt_mib_count_temporary(uint32_t stack);
/* Whether the calling thread holds (or is taking) a stripe or another
 * runtime lock: a signal handler that interrupted it there must not wait
 * for what a lock holder waits for (output/rt_roots_stop.c). */
RT_HIDDEN int rt_mib_thread_locked(void);
RT_HIDDEN void rt_mib_lock_all(void);
RT_HIDDEN int rt_mib_trylock_all(void);
RT_HIDDEN void rt_mib_unlock_all(void);
RT_HIDDEN void rt_mib_reset_locks(void);
/* A context's live heap for the timeline (rt_timeline.c): now, and at the
 * last declared peak when epoch is the current peak epoch. */
typedef struct rt_timeline_ctx {
  uint64_t bytes, blocks;
  uint64_t peak_bytes, peak_blocks;
  uint64_t epoch;
} rt_timeline_ctx;
typedef struct rt_mib_entry {
  mpf_mib mib;
  uint64_t *hist; /* rt_ialloc'd, AccessHistogramSize entries */
  uint32_t present;
  uint32_t est; /* sampling: ref of the weighted totals (rt_mibtable.c), 0 = none */
  uint64_t temporaries; /* blocks freed before their thread's next allocation */
  rt_timeline_ctx tl; /* last: beside the depot node's head, read at intern */
} rt_mib_entry;
/* Iterate the present entries in id order (locks held). */
RT_HIDDEN void rt_mib_for_each(void (*cb)(uint32_t id, const rt_mib_entry *, void *),
                               void *ctx);
RT_HIDDEN void rt_mib_clear(void); /* locks held */
/* The dump's live-block pass (locks held): the heap's walk of its live
 * blocks comes from the caller (output/rt_dump.c), the table knowing
 * nothing of the heap. */
typedef void rt_block_walk(void (*cb)(const rt_block *, void *), void *ctx);
RT_HIDDEN void rt_mib_add_all_live(rt_block_walk *for_each_live);
/* Recording gate: on after init, off after the exit dump. */
RT_HIDDEN extern int rt_recording;

#endif
