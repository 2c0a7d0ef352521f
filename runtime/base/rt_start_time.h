/* rt_start_time.h - when the process started, on the runtime's clock
 * (rt_start_time.c). */
#ifndef MEMPROF_RT_START_TIME_H
#define MEMPROF_RT_START_TIME_H

#include "rt_internal.h"

enum {
  RT_START_KERNEL = 1,  /* the kernel's start of the process (/proc/self/stat) */
  RT_START_RUNTIME = 2, /* when the runtime recorded its epoch (no /proc) */
};

/* Records the start, once; after the epoch (rt_set_epoch). */
RT_HIDDEN void rt_start_record(void);
/* The start in ms from the epoch second (may be negative: the process
 * started in an earlier second than the runtime); *from an RT_START_*. */
RT_HIDDEN int64_t rt_start_ms(int *from);

#endif
