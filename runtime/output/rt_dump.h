/* rt_dump.h - writing one raw profile (rt_dump.c). */
#ifndef MEMPROF_RT_DUMP_H
#define MEMPROF_RT_DUMP_H

#include "runtime/base/rt_internal.h"

/* Write one profile now.  `from_signal`: only trylock, never block. */
RT_HIDDEN int rt_dump(int from_signal);
RT_HIDDEN void rt_dump_fork_prepare(void);
RT_HIDDEN void rt_dump_fork_parent(void);
RT_HIDDEN void rt_dump_fork_child(void);

#endif
