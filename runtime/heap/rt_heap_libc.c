/* rt_heap_libc.c - the C library's allocator as the home of the blocks
 * sampling leaves unrecorded (sample_interval with unsampled_to_libc=1,
 * the default in an instrumented program; preloaded into a program with
 * no instrumented code, start/rt_init.c resolves the default to 0: with
 * no shadow to keep, the profiler's heap serves small blocks faster).
 *
 * An unrecorded block needs nothing of ours: no stack, no metadata, no
 * shadow.  Served by the allocator after ours in the loader's order
 * (glibc's malloc, found with dlsym RTLD_NEXT once the loader may be
 * asked), it costs what it costs without the profiler, plus the sampling
 * countdown at allocation and a range check at free.  Only the recorded
 * blocks come from our heap: the design of PyPy's and jemalloc's samplers
 * taken one step further, since the allocator a program would have used
 * anyway is the fastest path there is for it.
 *
 * Telling the two apart at free needs no lookup in the common case: class
 * blocks lie in the heap's reservation and large blocks start on a page,
 * so any other pointer is the C library's.  A page-aligned pointer outside
 * the reservation (a large block of ours, or the C library's from
 * memalign) is looked up in the large blocks' table (rt_heap.c).
 *
 * What changes for the program: its unrecorded blocks follow the C
 * library's rules (realloc may grow one in place; a double free meets
 * glibc's checks; mallopt, malloc_trim and mallinfo are glibc's own and
 * act on its heap), and the allocator's statistics (malloc_stats,
 * __sanitizer_get_*) describe the profiler's heap only.  A signal handler
 * that interrupts its thread inside one of our calls to the C library
 * stays out of it (libc_tls.busy: its blocks come from our heap, its frees
 * wait, below); one that lands while glibc holds a lock of its own (a
 * thread's exit frees its cache under the arena lock) can deadlock, as
 * without the profiler: unsampled_to_libc=0 is for programs whose
 * handlers allocate.  Blocks allocated before the switch (during start-up)
 * are ours, and found as ours at free. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>

#include "rt_alloc.h"
#include "rt_heap.h"
#include "rt_heap_priv.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_sys.h"
#include "runtime/record/rt_sample.h"

libc_heap_fns libc_heap;
libc_tune_fns libc_tune;
int libc_heap_on;

/* The malloc family as `definition` resolves each of its names (ours:
 * this copy's functions, which it must not return). */
static libc_heap_fns heap_fns(void *(*definition)(const char *, void *),
                              const libc_heap_fns *ours) {
  return (libc_heap_fns){
      (void *(*)(size_t))definition("malloc", (void *)ours->malloc),
      (void (*)(void *))definition("free", (void *)ours->free),
      (void *(*)(size_t, size_t))definition("calloc", (void *)ours->calloc),
      (void *(*)(void *, size_t))definition("realloc", (void *)ours->realloc),
      (void *(*)(size_t, size_t))definition("memalign", (void *)ours->memalign),
      (size_t(*)(void *))definition("malloc_usable_size", (void *)ours->usable),
  };
}

void rt_heap_libc_install(const libc_heap_fns *ours, const libc_tune_fns *own_tune) {
  if (!rt_flags.unsampled_to_libc || !__atomic_load_n(&rt_sample_interval, __ATOMIC_RELAXED))
    return;
  libc_heap_fns f = heap_fns(rt_next_definition, ours);
  /* All of one family or none: a block must go back where it came from. */
  if (!f.malloc || !f.free || !f.calloc || !f.realloc || !f.memalign || !f.usable) {
    rt_report("WARNING: unsampled_to_libc: the C library's allocator was not "
              "found; unrecorded blocks come from the profiler's heap");
    return;
  }
  heap_ensure(); /* the recorded blocks' home, which rt_alloc then assumes */
  libc_heap = f;
#pragma GCC diagnostic push /* glibc marks mallinfo deprecated; programs call it */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  libc_tune = (libc_tune_fns){
      (int (*)(int, int))rt_next_definition("mallopt", (void *)own_tune->mallopt),
      (int (*)(size_t))rt_next_definition("malloc_trim", (void *)own_tune->trim),
      (struct mallinfo(*)(void))rt_next_definition("mallinfo", (void *)own_tune->mallinfo),
      (struct mallinfo2(*)(void))rt_next_definition("mallinfo2", (void *)own_tune->mallinfo2),
  };
#pragma GCC diagnostic pop
  __atomic_store_n(&libc_heap_on, 1, __ATOMIC_RELEASE);
}

/* ---- forwarding -----------------------------------------------------------
 * A copy that is not the process's allocator (rt_forwarding) still
 * defines what the allocator before it may not (strdup, reallocarray,
 * operator new, posix_memalign...), and the process calls it for those.
 * Each block it is asked for comes from the definitions the process would
 * call without it (rt_serving_definition: the allocator that serves
 * malloc, else the C library's), and each block it is given back goes to
 * them, so that no block of this copy's heap ever reaches the other
 * allocator's free. */
libc_heap_fns fwd_heap;

void rt_heap_forward_install(const libc_heap_fns *ours) {
  fwd_heap = heap_fns(rt_serving_definition, ours);
}

void *rt_forward_alloc(size_t size, size_t align, int zero) {
  if (align > 16)
    return fwd_heap.memalign ? fwd_heap.memalign(align, size) : NULL;
  if (zero)
    return fwd_heap.calloc ? fwd_heap.calloc(1, size) : NULL;
  return fwd_heap.malloc ? fwd_heap.malloc(size) : NULL;
}

void *rt_forward_realloc(void *p, size_t n) {
  return fwd_heap.realloc ? fwd_heap.realloc(p, n) : NULL;
}

void rt_forward_free(void *p) {
  if (fwd_heap.free)
    fwd_heap.free(p);
}

/* ---- signal handlers ----------------------------------------------------
 * A free that found this thread inside the C library's allocator (libc_tls.busy)
 * waits here; the interrupted call drains the list when it returns
 * (libc_leave).  Handlers that run meanwhile may defer more: each reserves
 * its entry before writing it and runs to completion before the drain
 * resumes. */
#define LIBC_DEFER_MAX 64

__thread libc_thread libc_tls __attribute__((tls_model("initial-exec")));
static __thread void *deferred[LIBC_DEFER_MAX] __attribute__((tls_model("initial-exec")));

void libc_defer_free(void *p) {
  uint32_t i = __atomic_fetch_add(&libc_tls.n_deferred, 1, __ATOMIC_ACQ_REL);
  if (i < LIBC_DEFER_MAX)
    deferred[i] = p;
  /* else the block is never freed: a storm of handlers freeing while this
   * thread was inside malloc */
}

void libc_drain_deferred(void) {
  libc_enter();
  for (;;) {
    uint32_t k = __atomic_load_n(&libc_tls.n_deferred, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < k && i < LIBC_DEFER_MAX; i++) {
      void *p = deferred[i];
      if (p) {
        deferred[i] = NULL;
        libc_heap.free(p);
      }
    }
    if (__atomic_compare_exchange_n(&libc_tls.n_deferred, &k, 0, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      break;
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  libc_tls.busy = 0;
}
