/* rt_init.c - core initialisation (rt_init_core) and the init entry points
 * of the ABI: __memprof_init, __memprof_preinit, the version check symbol,
 * __memprof_rt_version, and the constructor used when the runtime is a
 * shared object (LD_PRELOAD) and has no .preinit_array.
 *
 * rt_init_core is idempotent and thread-safe, and may run from the first
 * malloc: it first asks whether this copy serves malloc at all (else it
 * only installs forwarding: rt_interpose.c), then parses options,
 * publishes the shadow and installs the deadly-signal handlers, none of
 * which allocates.  Registrations that may
 * allocate (pthread_atfork) wait for a constructor or __memprof_init. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "rt_start.h"
#include "runtime/base/rt_background.h"
#include "runtime/base/rt_clock.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_start_time.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/output/rt_output.h"
#include "runtime/output/rt_roots.h"
#include "runtime/record/rt_mibtable.h"
#include "runtime/record/rt_sample.h"
#include "runtime/record/rt_shadow.h"
#include "runtime/record/rt_stack.h"
#include "runtime/record/rt_timeline.h"
#include "runtime/record/rt_unwind.h"

static int init_state; /* 0 not started, 1 running, 2 done */
static __thread int init_running_here __attribute__((tls_model("initial-exec")));

void rt_init_core(void) {
  if (RT_LIKELY(__atomic_load_n(&rt_inited, __ATOMIC_ACQUIRE)))
    return;
  if (init_running_here)
    return; /* re-entered from inside init: carry on uninitialised */
  int expected = 0;
  if (!__atomic_compare_exchange_n(&init_state, &expected, 1, 0,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2)
      rt_sched_yield();
    return;
  }
  init_running_here = 1;
  if (!rt_serves_malloc()) {
    /* Not the process's allocator: nothing starts; every block goes to
     * the one that serves malloc.  Said once, by the constructor. */
    rt_lifecycle_forward();
    __atomic_store_n(&rt_forwarding, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
    init_running_here = 0;
    return;
  }
  rt_flags_init();
  if (rt_flags.unsampled_to_libc < 0) /* the C library's where code counts from here */
    rt_flags.unsampled_to_libc = !rt_flags.lazy_shadow || rt_shadow_program_instrumented();
  rt_timeline_init();
  rt_sample_init(rt_timeline_on); /* after the timeline: it turns sampling off */
  rt_roots_init();                /* after sampling: it refuses the C library's */
  rt_shadow_init();
  rt_output_init();
  rt_signals_install();
  rt_hooks_init();
  rt_cpu_init();
  /* The optional background thread: the clock paces it, the allocator
   * populates pages on it (rt_background.h). */
  rt_clock_init();
  rt_bg_add_tick(rt_heap_prefault);
  rt_bg_add_tick(rt_large_follow);
  rt_stack_init();
  __atomic_store_n(&rt_recording, 1, __ATOMIC_RELEASE);
  /* lazy_shadow: the shadow stays untouched until instrumented code can
   * count (rt_shadow.h); a program linked with it counts from here. */
  if (!rt_flags.lazy_shadow || rt_shadow_program_instrumented())
    rt_shadow_start();
  __atomic_store_n(&rt_inited, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
  init_running_here = 0;
}

RT_EXPORT int __memprof_rt_version = 1;

/* Set by __memprof_init, which only the constructors clang adds to
 * instrumented modules call: without it (libmemprof.so preloaded into a
 * program built without -fmemory-profile) no code counts accesses but
 * the runtime's own mem and str interceptors, and the profile says so. */

RT_EXPORT void __memprof_init(void) {
  __atomic_store_n(&rt_instrumented, 1, __ATOMIC_RELAXED);
  rt_init_core();
  rt_shadow_start(); /* a module loaded later: counts from its constructor */
  rt_heap_whole_cells(); /* its blocks' counts are their own */
  rt_set_epoch(); /* first call only: later calls keep the epoch */
  if (rt_timeline_on)
    rt_start_record(); /* the timeline's StartMs, once */
  rt_lifecycle_install();
  rt_unwind_instrumented(); /* unwind_tables=-1: frame pointers from here */
}

RT_EXPORT void __memprof_preinit(void) {
  rt_init_core();
  rt_lifecycle_install();
}

RT_EXPORT void __memprof_version_mismatch_check_v1(void) {}

/* The shared runtime has no .preinit_array slot: initialise as early as a
 * constructor can (the first malloc may already have done it). */
__attribute__((constructor(101))) static void rt_constructor(void) {
  rt_init_core();
  if (__atomic_load_n(&rt_forwarding, __ATOMIC_ACQUIRE)) {
    rt_report("WARNING: another allocator serves malloc in this process (the "
              "program's own, or a first copy of a memory-profiling runtime): this "
              "copy records nothing, writes no profile and hands every block to it");
    return;
  }
  rt_set_epoch(); /* a program not built with -fmemory-profile never calls __memprof_init */
  if (rt_timeline_on)
    rt_start_record();
  rt_lifecycle_install();
}
