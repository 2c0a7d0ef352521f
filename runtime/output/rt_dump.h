/* rt_dump.h - writing one raw profile (rt_dump.c). */
#ifndef MEMPROF_RT_DUMP_H
#define MEMPROF_RT_DUMP_H

#include "runtime/base/rt_internal.h"

/* Write one profile now.  `from_signal`: only trylock, never block.
 * Returns 0 when written, -1 when the runtime is not started or writing
 * failed, RT_DUMP_BUSY when a lock could not be taken (from_signal):
 * nothing was written or cleared. */
#define RT_DUMP_BUSY (-2)
RT_HIDDEN int rt_dump(int from_signal);
RT_HIDDEN void rt_dump_fork_prepare(void);
RT_HIDDEN void rt_dump_fork_parent(void);
RT_HIDDEN void rt_dump_fork_child(void);

#endif
