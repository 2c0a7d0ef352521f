/* rt_live_high.c - the live heap's high-water mark for the roots census
 * (rt_live_high.h): one atomic counter of live bytes, and the level at
 * which the next call is due (the last high plus the step).
 *
 * The counter is signed: a block allocated before the watch started is
 * subtracted when freed without having been added, so the count may run
 * below the true live bytes by those blocks (none in a program whose
 * runtime starts before its first allocation, as the runtime's
 * initialization does).  While the watcher runs, other allocations that
 * pass the level find it busy and go on; the first allocation after it
 * returned 0 calls it again.  The high is the larger of the counter at
 * the allocation that called the watcher and the live bytes the watcher
 * saw (other threads allocate while it runs). */
#include "rt_live_high.h"

uint64_t rt_heap_high_step;
static int64_t live;
static int64_t due = INT64_MAX;
static rt_heap_high_fn watcher;
static int busy;

void rt_heap_watch_high(uint64_t step, rt_heap_high_fn fn) {
  if (!step || !fn)
    return;
  watcher = fn;
  __atomic_store_n(&due, (int64_t)step, __ATOMIC_RELAXED);
  __atomic_store_n(&rt_heap_high_step, step, __ATOMIC_RELEASE);
}

void rt_heap_high_event(int is_free, uint64_t size, void *p) {
  int64_t d = is_free ? -(int64_t)size : (int64_t)size;
  int64_t now = __atomic_add_fetch(&live, d, __ATOMIC_RELAXED);
  if (is_free || now < __atomic_load_n(&due, __ATOMIC_RELAXED))
    return;
  if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
    return;
  if (now >= __atomic_load_n(&due, __ATOMIC_RELAXED)) {
    int64_t seen = (int64_t)watcher(p, (uint64_t)now);
    if (seen)
      __atomic_store_n(&due, (seen > now ? seen : now) + (int64_t)rt_heap_high_step,
                       __ATOMIC_RELAXED);
  }
  __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}
