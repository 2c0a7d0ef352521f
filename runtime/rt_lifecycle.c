/* rt_lifecycle.c - process lifecycle: the exit-time dump (after the
 * program's atexit handlers and C++ static destructors), atexit statistics,
 * and fork (all runtime locks held across fork; the child drops the
 * parent's recorded MIBs and writes its own file). */
#define _GNU_SOURCE
#include <pthread.h>

#include "rt_core.h"
#include "rt_sample.h"
#include "rt_unwind.h"

int rt_exit_dumped;
static int installed;

static void fork_prepare(void) {
  rt_dump_fork_prepare();
  rt_mib_lock_all();
  rt_output_fork_prepare();
  rt_stack_fork_prepare();
  rt_heap_fork_prepare();
  rt_ialloc_fork_prepare();
  rt_symtab_fork_prepare(); /* a leaf: nothing is locked while it is held */
}

static void fork_parent(void) {
  rt_symtab_fork_parent();
  rt_ialloc_fork_parent();
  rt_heap_fork_parent();
  rt_stack_fork_parent();
  rt_output_fork_parent();
  rt_mib_unlock_all();
  rt_dump_fork_parent();
}

static void fork_child(void) {
  rt_bg_fork_child();
  rt_symtab_fork_child();
  rt_ialloc_fork_child();
  rt_heap_fork_child();
  rt_stack_fork_child();
  rt_output_fork_child();
  rt_mib_reset_locks();
  rt_dump_fork_child();
  rt_timeline_fork_child();
  /* The parent reports what it recorded; the child only its own frees and
   * the blocks it still holds at its dumps. */
  rt_mib_clear();
  rt_sample_fork_child();
}

void rt_lifecycle_install(void) {
  int expected = 0;
  if (__atomic_compare_exchange_n(&installed, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    rt_libc_resolve();
    rt_heap_libc_install();
    rt_output_install_exit();
    rt_unwind_init();
  }
}

/* .fini_array.101 runs after every handler registered with atexit /
 * __cxa_atexit (C++ static destructors included), since exit() calls those
 * before _dl_fini, and after the executable's other destructors. */
__attribute__((destructor(101))) static void rt_exit(void) {
  if (!rt_inited || rt_exit_dumped)
    return;
  if (rt_flags.atexit)
    rt_print_exit_stats();
  if (rt_flags.dump_at_exit)
    rt_dump(0);
  __atomic_store_n(&rt_recording, 0, __ATOMIC_RELEASE);
  rt_exit_dumped = 1;
  rt_output_exit_check();
}
