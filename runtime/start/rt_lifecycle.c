/* rt_lifecycle.c - process lifecycle: the exit-time dump (after the
 * program's atexit handlers and C++ static destructors, or at _exit and
 * _Exit), atexit statistics, and fork (all runtime locks held across
 * fork; the child drops the parent's recorded MIBs and writes its own
 * file). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_start.h"
#include "runtime/base/rt_background.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_state.h"
#include "runtime/heap/rt_alloc.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/output/rt_dump.h"
#include "runtime/output/rt_output.h"
#include "runtime/output/rt_roots.h"
#include "runtime/output/rt_symtab.h"
#include "runtime/output/rt_text.h"
#include "runtime/record/rt_mibtable.h"
#include "runtime/record/rt_sample.h"
#include "runtime/record/rt_stack.h"
#include "runtime/record/rt_threads.h"
#include "runtime/record/rt_timeline.h"
#include "runtime/record/rt_unwind.h"

static int installed;

/* The process whose memory this is: a child of vfork shares it with its
 * parent, which is only suspended, and must not dump (nor clear the
 * parent's table) when it calls _exit. */
static int owner_pid;

int rt_owns_memory(void) { return rt_getpid() == owner_pid; }

/* The runtime's own definitions of the C library functions it resolves
 * (the counting interceptors, the malloc family: entry/), which the
 * loader's answers are compared with. */
static const rt_libc_fns own_libc = {
#define RT_LIBC_FN(name, ret, args) (ret(*) args) name,
#include "runtime/base/rt_libc_fns.inc"
#undef RT_LIBC_FN
};
static const libc_heap_fns own_heap = {malloc, free, calloc, realloc, memalign,
                                       (size_t(*)(void *))malloc_usable_size};
#pragma GCC diagnostic push /* glibc marks mallinfo deprecated; programs call it */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static const libc_tune_fns own_tune = {mallopt, malloc_trim, mallinfo, mallinfo2};
#pragma GCC diagnostic pop

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
  rt_threads_fork_child();
  rt_roots_fork_child();
  /* The parent reports what it recorded; the child only its own frees and
   * the blocks it still holds at its dumps. */
  rt_mib_clear();
  rt_sample_fork_child();
  owner_pid = rt_getpid();
}

void rt_lifecycle_forward(void) {
  rt_libc_resolve(&own_libc); /* the interceptors' work, done by glibc */
  rt_heap_forward_install(&own_heap);
}

void rt_lifecycle_install(void) {
  int expected = 0;
  if (__atomic_compare_exchange_n(&installed, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    owner_pid = rt_getpid();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    rt_libc_resolve(&own_libc);
    rt_heap_libc_install(&own_heap, &own_tune);
    rt_output_install_exit();
    rt_unwind_init();
  }
}

/* The process's last profile: statistics, the roots census's entry
 * (inline, so that the registers and frame saved are the caller's), the
 * dump, and recording stopped. */
static inline __attribute__((always_inline)) void end_dump(int from_signal) {
  if (rt_flags.atexit)
    rt_print_exit_stats();
  rt_roots_at_exit = 1;
  RT_ROOTS_ENTER();
  if (rt_flags.dump_at_exit)
    rt_dump(from_signal);
  __atomic_store_n(&rt_recording, 0, __ATOMIC_RELEASE);
  rt_exit_dumped = 1;
}

/* .fini_array.101 runs after every handler registered with atexit /
 * __cxa_atexit (C++ static destructors included), since exit() calls those
 * before _dl_fini, and after the executable's other destructors. */
__attribute__((destructor(101))) static void rt_exit(void) {
  if (!rt_inited || rt_exit_dumped)
    return;
  end_dump(0);
  rt_output_exit_check();
}

/* _exit and _Exit: the process ends without exit's handlers (Python's
 * os._exit in a forked worker, a server's child, a signal handler), so
 * the exit-time dump is done here, with dump_at__exit; exit() itself
 * reaches the kernel through glibc's internal name, not this one.  The
 * dump only try-locks when this thread holds a runtime lock or a stripe
 * of the MIB table (a signal handler that interrupted the runtime) and,
 * like a failed dump at exit, makes a status of 0 one of 1. */
RT_EXPORT __attribute__((noreturn)) void _exit(int status) {
  static int ending;
  if (rt_inited && !rt_exit_dumped && rt_flags.dump_at__exit && rt_owns_memory() &&
      !__atomic_exchange_n(&ending, 1, __ATOMIC_ACQ_REL)) {
    end_dump(rt_mib_thread_locked());
    if (rt_profile_failed && status == 0)
      status = 1;
  }
  for (;;)
    rt_syscall(SYS_exit_group, status, 0, 0);
}

RT_EXPORT __attribute__((noreturn)) void _Exit(int status) RT_ALIAS(_exit);
