/* rt_timeline.h - live heap per context over time (rt_timeline.c). */
#ifndef MEMPROF_RT_TIMELINE_H
#define MEMPROF_RT_TIMELINE_H

#include "runtime/base/rt_internal.h"

/* Live heap per context, the peak and the censuses of timeline=1 or
 * peak_snapshot=1; rt_timeline_on is 0 otherwise and the hooks cost one load. */
RT_HIDDEN extern int rt_timeline_on;
RT_HIDDEN void rt_timeline_init(void); /* after the flags */
/* A block of `size` bytes of stack ref `stack` allocated (is_free 0) or
 * freed; stamp is rt_stamp()'s, ms its rt_stamp_ms (0: not read yet). */
RT_HIDDEN void rt_timeline_event(int is_free, uint64_t size, uint32_t stack, uint64_t stamp,
                                 uint32_t ms);
static inline void rt_timeline_count(int is_free, uint64_t size, uint32_t stack,
                                     uint64_t stamp, uint32_t ms) {
  if (RT_UNLIKELY(__atomic_load_n(&rt_timeline_on, __ATOMIC_RELAXED)))
    rt_timeline_event(is_free, size, stack, stamp, ms);
}
/* Writes "<raw path>.timeline" for the raw profile at raw_path, which has
 * raw_bytes bytes now. */
RT_HIDDEN void rt_timeline_write(const char *raw_path, uint64_t raw_bytes);
RT_HIDDEN void rt_timeline_fork_child(void);

#endif
