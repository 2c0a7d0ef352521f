/* rt_threads.h - the threads the runtime started (rt_threads.c): where
 * each one's stack, static TLS and thread control block lie, for the
 * roots census (roots=1) to scan. */
#ifndef MEMPROF_RT_THREADS_H
#define MEMPROF_RT_THREADS_H

#include "runtime/base/rt_internal.h"

/* One thread: its id, its stack [bottom, top) and its thread pointer
 * (glibc keeps its static TLS just below it, its control block at it). */
typedef struct rt_thread_rec {
  int tid; /* 0: free slot, -1: being filled */
  int slot; /* its index in the table (set in the copies for_each hands out) */
  uintptr_t bottom, top, tp;
} rt_thread_rec;

#define RT_THREADS_MAX 4096
/* Ended threads whose thread pointers are kept (glibc's stack cache holds
 * 40 MiB of stacks: five threads of the default 8 MiB, 160 of 256 KiB). */
#define RT_EXITED_MAX 256
/* The calling thread's slot + 1; 0 when it has none (a signal handler
 * reads it: output/rt_roots_stop.c). */
RT_HIDDEN extern __thread int rt_thread_slot __attribute__((tls_model("initial-exec")));

/* Registers the calling thread (entry/rt_thread.c's trampoline, before the
 * program's start routine); a slot index, or -1 (roots off, table full). */
RT_HIDDEN int rt_threads_enter(uintptr_t bottom, uintptr_t top);
/* The thread of slot `slot` returned from its start routine. */
RT_HIDDEN void rt_threads_leave(int slot);
/* The id of the thread in slot `slot` now (0: none). */
RT_HIDDEN int rt_threads_tid(int slot);
/* Calls cb with a copy of every registered thread's record. */
RT_HIDDEN void rt_threads_for_each(void (*cb)(const rt_thread_rec *, void *), void *ctx);
/* Whether a registered thread has thread pointer tp. */
RT_HIDDEN int rt_threads_live_tp(uintptr_t tp);
/* The thread pointers of the last threads that returned from their start
 * routine, newest first, each once and none a registered thread has now;
 * returns how many (at most max). */
RT_HIDDEN int rt_threads_exited(uintptr_t *out, int max);
RT_HIDDEN void rt_threads_fork_child(void);

#endif
