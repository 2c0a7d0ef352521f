/* rt_background.h - the runtime's optional background thread
 * (background_thread=1): its state, and the work others hand it.
 *
 * The thread belongs to no other module: rt_background.c owns its loop and
 * its sleeping, rt_ticker.c starts it.  The clock paces it (the pacer says
 * how long to the next tick, or that the thread should sleep) and wakes
 * it; the allocator's files register work to do at every tick (populating
 * pages ahead of the program) and ask whether it runs before they post
 * any.  No file reads another's state to learn whether it runs. */
#ifndef MEMPROF_RT_BACKGROUND_H
#define MEMPROF_RT_BACKGROUND_H

#include <stdint.h>

#define RT_BG_HIDDEN __attribute__((visibility("hidden")))

/* NONE: not started yet; STARTING: being started; RUN: ticking every ms;
 * SLOW: asleep until woken; OFF: never (disabled, or it could not start). */
enum { RT_BG_NONE, RT_BG_STARTING, RT_BG_RUN, RT_BG_SLOW, RT_BG_OFF };
RT_BG_HIDDEN extern int rt_bg_state;

/* Whether the thread ticks now: work posted for it will be done. */
static inline int rt_bg_running(void) {
  return __atomic_load_n(&rt_bg_state, __ATOMIC_RELAXED) == RT_BG_RUN;
}

/* Work for every tick, in registration order, and once more before the
 * thread sleeps.  Registered at initialisation, before any thread runs;
 * a hook makes raw syscalls only (the thread has no libc state). */
RT_BG_HIDDEN void rt_bg_add_tick(void (*fn)(void));

/* The pacer runs first at every tick: nanoseconds to the next tick, or a
 * negative value to sleep until rt_bg_wake. */
RT_BG_HIDDEN void rt_bg_set_pacer(long (*pacer)(void));

/* From NONE: start the thread (RUN) if `enabled`, else OFF for good.
 * Any thread may call it; one wins. */
RT_BG_HIDDEN void rt_bg_start(int enabled);
/* From SLOW: back to RUN. */
RT_BG_HIDDEN void rt_bg_wake(void);
/* A forked child has no thread: it may start its own. */
RT_BG_HIDDEN void rt_bg_fork_child(void);

#endif
