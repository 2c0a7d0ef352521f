/* rt_heap_nested.c - allocator calls made by a signal handler.
 *
 * malloc and free may run in a signal handler that interrupted its own
 * thread inside the allocator, with the thread cache half updated and
 * maybe a central lock (or the registry lock) held.  Such a call finds the
 * thread busy and takes the nested path: it leaves the thread cache alone,
 * takes a slot from the central list of the class (or, if this thread holds
 * that lock, of a larger class, which holds the block as well), and gives
 * a slot back at once unless this thread holds the class's lock; that free
 * waits in tc.deferred until the interrupted code leaves the allocator.
 * While the interrupted code holds any runtime lock, central locks are
 * only tried (lock_central): a busy class is passed over like a held one,
 * and a give that finds its lock busy is deferred the same way.
 */
#include "rt_heap_priv.h"
#include "rt_size_class.h"

/* Handlers that run meanwhile may defer more; each reserves its entry
 * before writing it and runs to completion before this code resumes.  A
 * give that may not wait (lock_central) ends the round: the entries given
 * back are marked, and the next leave_busy goes on. */
void rt_drain_deferred(void) {
  enter_busy();
  for (;;) {
    uint32_t k = __atomic_load_n(&rt_tc.n_deferred, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < k && i < DEFER_MAX; i++) {
      deferred_free *d = &rt_tc.deferred[i];
      if (d->cls == DEFER_DONE)
        continue;
      if (!rt_central_put((int)d->cls, &d->slot, 1))
        goto out;
      d->cls = DEFER_DONE;
    }
    if (__atomic_compare_exchange_n(&rt_tc.n_deferred, &k, 0, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      break;
  }
out:
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  rt_tc.busy = 0;
}

/* A slot of class *cls, or of a larger class whose size keeps `align`
 * (*cls is updated). */
uint32_t rt_nested_take(int *cls, size_t align) {
  for (int c = *cls; c < NCLASS; c++) {
    uint32_t s;
    if (rt_tc.held >> c & 1 || !rt_class_serves(c, align))
      continue;
    if (rt_central_take(c, &s, 1)) {
      *cls = c;
      return s;
    }
  }
  return NO_SLOT;
}

void rt_defer_give(int c, uint32_t s) {
  uint32_t i = __atomic_fetch_add(&rt_tc.n_deferred, 1, __ATOMIC_ACQ_REL);
  if (i < DEFER_MAX)
    rt_tc.deferred[i] = (deferred_free){(uint32_t)c, s};
  /* else the slot is never reused: a storm of handlers freeing while this
   * thread held a lock */
}

void rt_nested_give(int c, uint32_t s) {
  if (rt_tc.held >> c & 1 || !rt_central_put(c, &s, 1))
    rt_defer_give(c, s);
}
