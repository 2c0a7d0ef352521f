/* rt_state.h - the runtime's process-wide state words (rt_state.c) that
 * files of every layer read, the count of locks a thread holds, and the
 * two calls that go up the layers (runtime/README.md, "upward hooks"):
 * rt_init_core (lazy start-up, defined in start/rt_init.c) and
 * rt_mib_merge_parked (leaving the last lock, record/rt_mibtable.c). */
#ifndef MEMPROF_RT_STATE_H
#define MEMPROF_RT_STATE_H

#include "rt_lock.h"

/* True once the core is fully initialised (shadow, options, epoch). */
RT_HIDDEN extern int rt_inited;
/* Whether instrumented code called __memprof_init (start/rt_init.c). */
RT_HIDDEN extern int rt_instrumented;
/* This copy is not the process's allocator: a module before it in the
 * loader's order defines malloc (the program's own allocator, or a first
 * copy of a memory-profiling runtime; start/rt_interpose.c).  It records
 * nothing and hands each block it is asked for to that allocator
 * (heap/rt_heap_libc.c, "forwarding"). */
RT_HIDDEN extern int rt_forwarding;
/* Upward hook: start the runtime (idempotent, thread-safe). */
RT_HIDDEN void rt_init_core(void);

/* A profile could not be written where asked (a file that could not be
 * opened, a log_path too long): the exit status becomes 1 if the
 * program's is 0 (output/rt_output.c checks after the exit dump). */
RT_HIDDEN extern int rt_profile_failed;
static inline void rt_output_note_failure(void) {
  __atomic_store_n(&rt_profile_failed, 1, __ATOMIC_RELAXED);
}

/* Set on the thread dumping from a deadly-signal handler: every runtime
 * lock is then only try-locked (the crashed code may hold it). */
RT_HIDDEN extern __thread int rt_nonblocking __attribute__((tls_model("initial-exec")));

/* Runtime locks this thread holds or is taking, stripes of the MIB table
 * aside (rt_mibtable.c counts those).  malloc and free may run in a signal
 * handler that interrupted its own thread inside the runtime; deadlock is
 * ruled out by three rules: code that holds a lock never blocks on a MIB
 * stripe; a handler never takes a lock its own thread holds (each lock's
 * owner knows: the heap's busy flag and class bits (rt_heap_priv.h), rt_ialloc.c,
 * rt_large.c); and a thread that holds a lock only tries the heap's
 * central locks (rt_heap_central.c's lock_central): two handlers, each waiting for
 * the class lock the other's interrupted code held, deadlocked.  The
 * ialloc and large-block locks still block; a cycle through them needs a
 * handler's large malloc or histogram while another thread's handler
 * waits on the lock this one's code holds. */
RT_HIDDEN extern __thread int rt_locks_held __attribute__((tls_model("initial-exec")));
/* Nonzero while handlers' MIBs wait on the parked list (rt_mibtable.c):
 * they are merged by the next thread that holds no lock any more.
 * rt_mib_merge_parked is the upward hook that does it. */
RT_HIDDEN extern uint64_t rt_mib_parked;
RT_HIDDEN void rt_mib_merge_parked(void);
static inline void rt_locks_enter(void) {
  rt_locks_held++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
static inline void rt_locks_leave(void) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  if (!--rt_locks_held && RT_UNLIKELY(__atomic_load_n(&rt_mib_parked, __ATOMIC_RELAXED) != 0))
    rt_mib_merge_parked();
}

/* A leaf lock (its holder waits for no other lock): taken unless this
 * thread holds it already (*held: a signal handler that interrupted its
 * holder), and only try-locked while dying from a signal.  0 if not taken:
 * the caller does without. */
static inline int rt_leaf_lock(rt_mutex *m, int *held) {
  if (*held || (rt_nonblocking && !rt_mutex_trylock(m)))
    return 0;
  rt_locks_enter();
  *held = 1;
  if (!rt_nonblocking)
    rt_mutex_lock(m);
  return 1;
}

static inline void rt_leaf_unlock(rt_mutex *m, int *held) {
  rt_mutex_unlock(m);
  *held = 0;
  rt_locks_leave();
}

#endif
