/* rt_heap_tcache.c - per-thread caches of free slots, and the registry of
 * the threads that have one.
 *
 * A thread's cache holds up to tc_cap[c] slots of each class c; malloc and
 * free take and put there without a lock (slot_take and slot_give in
 * rt_heap_priv.h), and an empty or full bin refills or drains half its
 * capacity from or to the class's central list.  A thread registers on its
 * first allocation or, when started through pthread_create, first thing
 * (rt_tcache_thread_start); at its exit its slots go back to the central
 * lists and its statistics into `retired`.  A thread that has exited its
 * cache (its TSD destructors ran) still allocates, straight from the
 * central lists.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "rt_heap_priv.h"
#include "rt_size_class.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"

/* Statistics: per-thread counters (no shared cache line on the fast path),
 * folded into `retired` when a thread exits. */
static heap_counters retired;
static rt_mutex registry_mu = RT_MUTEX_INIT;
static tcache *registry;
static pthread_key_t tc_key;
static int tc_key_made; /* under registry_mu */

static void counters_add(heap_counters *to, const heap_counters *from) {
  to->mallocs += from->mallocs;
  to->frees += from->frees;
  to->bytes_alloc += from->bytes_alloc;
  to->bytes_freed += from->bytes_freed;
  to->reallocs += from->reallocs;
  to->bytes_realloc += from->bytes_realloc;
}

static void tc_thread_exit(void *arg);

static void tc_register(void) {
  rt_locks_enter();
  rt_mutex_lock(&registry_mu);
  if (!tc_key_made) {
    pthread_key_create(&tc_key, tc_thread_exit);
    tc_key_made = 1;
  }
  rt_tc.next = registry;
  rt_tc.pprev = &registry;
  if (registry)
    registry->pprev = &rt_tc.next;
  registry = &rt_tc;
  rt_mutex_unlock(&registry_mu);
  rt_locks_leave();
  rt_tc.state = TC_REGISTERED;
  pthread_setspecific(tc_key, &rt_tc);
}

static void tc_thread_exit(void *arg) {
  (void)arg;
  if (rt_tc.state != TC_REGISTERED)
    return; /* see rt_tcache_thread_start */
  enter_busy();
  for (int c = 0; c < NCLASS; c++) {
    rt_central_put(c, rt_tc.bin[c].slot, rt_tc.bin[c].n);
    rt_tc.bin[c].n = 0;
  }
  rt_locks_enter();
  rt_mutex_lock(&registry_mu);
  *rt_tc.pprev = rt_tc.next;
  if (rt_tc.next)
    rt_tc.next->pprev = rt_tc.pprev;
  counters_add(&retired, &rt_tc.cnt);
  rt_mutex_unlock(&registry_mu);
  rt_locks_leave();
  rt_tc.state = TC_EXITING; /* later frees on this thread bypass the cache */
  leave_busy();
}

/* Threads started through pthread_create register here, first thing.
 * Registering on a thread's first malloc instead could happen after its
 * TSD destructors ran (a signal handler on an exiting thread): the thread
 * would stay in the registry after it is gone, and its TSD slot would
 * outlive it into the next thread glibc builds on the same memory. */
void rt_tcache_thread_start(void) {
  if (rt_tc.busy || rt_tc.state != TC_FRESH)
    return;
  enter_busy();
  tc_register();
  leave_busy();
}

uint32_t rt_tcache_take_slow(int c) {
  uint32_t s;
  if (rt_tc.state == TC_EXITING)
    return rt_central_take(c, &s, 1) ? s : NO_SLOT;
  if (rt_tc.state == TC_FRESH)
    tc_register();
  tc_bin *b = &rt_tc.bin[c];
  if (b->n == 0) {
    b->n = rt_central_take(c, b->slot, tc_cap[c] / 2 ? tc_cap[c] / 2 : 1);
    if (!b->n)
      return NO_SLOT;
  }
  return b->slot[--b->n];
}

void rt_tcache_give_slow(int c, uint32_t s) {
  if (rt_tc.state == TC_EXITING) {
    if (!rt_central_put(c, &s, 1))
      rt_defer_give(c, s);
    return;
  }
  if (rt_tc.state == TC_FRESH)
    tc_register();
  tc_bin *b = &rt_tc.bin[c];
  if (b->n == tc_cap[c]) {
    uint32_t half = tc_cap[c] / 2;
    if (!rt_central_put(c, b->slot + b->n - half, half)) {
      rt_defer_give(c, s); /* a handler that may not wait (lock_central) */
      return;
    }
    b->n -= half;
  }
  b->slot[b->n++] = s;
}

/* A thread without a registered cache counts in the shared totals. */
void rt_tcache_count_shared(int is_free, uint64_t size) {
  if (is_free) {
    __atomic_fetch_add(&retired.frees, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&retired.bytes_freed, size, __ATOMIC_RELAXED);
  } else {
    __atomic_fetch_add(&retired.mallocs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&retired.bytes_alloc, size, __ATOMIC_RELAXED);
  }
}

void rt_tcache_count_shared_realloc(uint64_t size) {
  __atomic_fetch_add(&retired.reallocs, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&retired.bytes_realloc, size, __ATOMIC_RELAXED);
}

void rt_tcache_sum(heap_counters *sum) {
  rt_mutex_lock(&registry_mu);
  *sum = retired;
  for (tcache *t = registry; t; t = t->next)
    counters_add(sum, &t->cnt);
  rt_mutex_unlock(&registry_mu);
}

void rt_tcache_fork_prepare(void) { rt_mutex_lock(&registry_mu); }
void rt_tcache_fork_parent(void) { rt_mutex_unlock(&registry_mu); }
void rt_tcache_fork_child(void) { rt_mutex_reset(&registry_mu); }
