/* rt_start.h - what the start-up files offer each other: the exit and
 * fork handlers (rt_lifecycle.c), the deadly-signal handlers
 * (rt_signal.c), the second-copy check (rt_interpose.c). */
#ifndef MEMPROF_RT_START_H
#define MEMPROF_RT_START_H

#include "runtime/base/rt_internal.h"

RT_HIDDEN void rt_lifecycle_install(void);
/* Forwarding (rt_forwarding): hands the heap the definitions the process
 * would call without this copy (rt_heap_forward_install). */
RT_HIDDEN void rt_lifecycle_forward(void);
RT_HIDDEN void rt_signals_install(void);
/* 0 in a child of vfork, which shares its parent's memory (and must not
 * dump or change it), 1 in the process that owns it (rt_lifecycle.c). */
RT_HIDDEN int rt_owns_memory(void);
/* Whether this copy is the process's malloc (rt_interpose.c). */
RT_HIDDEN int rt_serves_malloc(void);

#endif
