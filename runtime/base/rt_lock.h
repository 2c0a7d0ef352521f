/* rt_lock.h - the runtime's mutex: a three-state futex lock (0 free,
 * 1 locked, 2 locked with waiters).  Never allocates, safe inside malloc,
 * and not owner-tracked, so a forked child can simply reset it. */
#ifndef MEMPROF_RT_LOCK_H
#define MEMPROF_RT_LOCK_H

#include "rt_sys.h"

typedef struct rt_mutex {
  int v;
} rt_mutex;
#define RT_MUTEX_INIT {0}

RT_HIDDEN void rt_mutex_lock_slow(rt_mutex *m);

/* 0 -> 1 with acquire: the uncontended path. */
static inline int rt_lock_word_take(int *v) {
  int c = 0;
  return __atomic_compare_exchange_n(v, &c, 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED);
}

static inline void rt_mutex_lock(rt_mutex *m) {
  if (!rt_lock_word_take(&m->v))
    rt_mutex_lock_slow(m);
}

static inline int rt_mutex_trylock(rt_mutex *m) { return rt_lock_word_take(&m->v); }

/* Waiting for m apart from taking it, for a thread that must not be seen
 * taking m while it sleeps (rt_mibtable.c's stripes). */
RT_HIDDEN void rt_mutex_wait_free(rt_mutex *m);
static inline int rt_mutex_trylock_waited(rt_mutex *m) {
  int c = 0;
  return __atomic_compare_exchange_n(&m->v, &c, 2, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED);
}

static inline void rt_mutex_unlock(rt_mutex *m) {
  if (__atomic_exchange_n(&m->v, 0, __ATOMIC_RELEASE) == 2)
    rt_futex(&m->v, 1 /* FUTEX_WAKE */ | 128 /* PRIVATE */, 1);
}

/* For the fork child: whoever held it is gone. */
static inline void rt_mutex_reset(rt_mutex *m) { m->v = 0; }

#endif
