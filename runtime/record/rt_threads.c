/* rt_threads.c - a table of the threads started through pthread_create
 * while roots=1: each one's stack bounds and thread pointer, so that a
 * roots census taken on one thread can scan the others' stacks and TLS
 * (output/rt_roots_threads.c), and stop them first (output/rt_roots_stop.c,
 * whose signal handler finds its thread's slot in rt_thread_slot).
 * Nothing is recorded when roots is off.
 *
 * A slot is claimed with one compare-and-swap and never blocks.  A thread
 * that returns from its start routine frees its slot, and its thread
 * pointer goes into a ring of the last RT_EXITED_MAX ones: glibc keeps an
 * ended thread's control block in its stack cache, and with it the DTV
 * (and dynamic TLS) it allocated, until the stack is reused or unmapped.
 * A thread that ends through pthread_exit or is cancelled keeps its slot:
 * the census reads its memory with process_vm_readv, which fails
 * harmlessly once glibc has unmapped the stack. */
#include "rt_threads.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_sys.h"

#define MAX_THREADS RT_THREADS_MAX

static rt_thread_rec table[MAX_THREADS];
static int used; /* slots ever claimed: the census reads [0, used) */
static uintptr_t exited[RT_EXITED_MAX]; /* thread pointers, a ring */
static unsigned n_exited;               /* ever put in the ring */
__thread int rt_thread_slot;

int rt_threads_enter(uintptr_t bottom, uintptr_t top) {
  if (!rt_flags.roots)
    return -1;
  for (int i = 0; i < MAX_THREADS; i++) {
    int zero = 0;
    if (!__atomic_compare_exchange_n(&table[i].tid, &zero, -1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
      continue;
    table[i].bottom = bottom;
    table[i].top = top;
    table[i].tp = (uintptr_t)__builtin_thread_pointer();
    int n = __atomic_load_n(&used, __ATOMIC_ACQUIRE);
    while (n <= i && !__atomic_compare_exchange_n(&used, &n, i + 1, 0, __ATOMIC_ACQ_REL,
                                                  __ATOMIC_ACQUIRE))
      ;
    table[i].slot = i;
    rt_thread_slot = i + 1; /* before the census can see it and ask */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&table[i].tid, rt_gettid(), __ATOMIC_RELEASE);
    return i;
  }
  return -1;
}

void rt_threads_leave(int slot) {
  if (slot < 0)
    return;
  rt_thread_slot = 0;
  unsigned k = __atomic_fetch_add(&n_exited, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&exited[k % RT_EXITED_MAX], table[slot].tp, __ATOMIC_RELEASE);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&table[slot].tid, 0, __ATOMIC_RELEASE);
}

int rt_threads_live_tp(uintptr_t tp) {
  int n = __atomic_load_n(&used, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n && i < MAX_THREADS; i++)
    if (__atomic_load_n(&table[i].tid, __ATOMIC_ACQUIRE) > 0 && table[i].tp == tp)
      return 1;
  return 0;
}

int rt_threads_exited(uintptr_t *out, int max) {
  unsigned n = __atomic_load_n(&n_exited, __ATOMIC_ACQUIRE);
  int k = 0;
  for (unsigned i = n; i-- > 0 && n - i <= RT_EXITED_MAX && k < max;) {
    uintptr_t tp = __atomic_load_n(&exited[i % RT_EXITED_MAX], __ATOMIC_ACQUIRE);
    int seen = !tp || rt_threads_live_tp(tp);
    for (int j = 0; j < k && !seen; j++)
      seen = out[j] == tp;
    if (!seen)
      out[k++] = tp;
  }
  return k;
}

int rt_threads_tid(int slot) {
  return slot >= 0 && slot < MAX_THREADS ? __atomic_load_n(&table[slot].tid, __ATOMIC_ACQUIRE)
                                         : 0;
}

void rt_threads_for_each(void (*cb)(const rt_thread_rec *, void *), void *ctx) {
  int n = __atomic_load_n(&used, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n && i < MAX_THREADS; i++) {
    rt_thread_rec r = table[i];
    r.slot = i;
    if (__atomic_load_n(&table[i].tid, __ATOMIC_ACQUIRE) > 0 && r.tid > 0)
      cb(&r, ctx);
  }
}

/* Only the forking thread lives on in the child, under another id: a
 * census scans it as the calling thread. */
void rt_threads_fork_child(void) {
  rt_thread_slot = 0;
  for (int i = 0; i < MAX_THREADS; i++)
    table[i].tid = 0;
  used = 0;
  n_exited = 0;
}
