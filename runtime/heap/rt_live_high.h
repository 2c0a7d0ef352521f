/* rt_live_high.h - the live heap's high-water mark, watched for the roots
 * census (roots=1 with roots_peak_step_kb): the heap counts the live bytes
 * of every block of its own at each allocation and free while a watcher is
 * set, and calls the watcher from the allocation that takes the live
 * bytes to the last high plus the step or above (rt_live_high.c). */
#ifndef MEMPROF_RT_LIVE_HIGH_H
#define MEMPROF_RT_LIVE_HIGH_H

#include "runtime/base/rt_internal.h"

/* The watcher gets the block just allocated (which only the calling
 * thread's registers may hold yet) and the live bytes with it; it returns
 * the live bytes it saw (the next call is due at the larger of those and
 * `live`, plus the step), or 0 to be called again by the next
 * allocation. */
typedef uint64_t (*rt_heap_high_fn)(void *just_allocated, uint64_t live);
/* Starts counting (before the program's first allocation: blocks of
 * earlier ones are not counted when freed either, see rt_live_high.c). */
RT_HIDDEN void rt_heap_watch_high(uint64_t step, rt_heap_high_fn fn);

RT_HIDDEN extern uint64_t rt_heap_high_step; /* 0: no watcher */
RT_HIDDEN void rt_heap_high_event(int is_free, uint64_t size, void *p);
static inline void rt_heap_high_count(int is_free, uint64_t size, void *p) {
  if (RT_UNLIKELY(__atomic_load_n(&rt_heap_high_step, __ATOMIC_RELAXED)))
    rt_heap_high_event(is_free, size, p);
}

#endif
