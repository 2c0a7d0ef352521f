/* rt_stack_bounds.c - the calling thread's stack bounds, for the unwinder.
 *
 * The main thread's top is glibc's __libc_stack_end.  A thread created
 * through pthread_create starts in entry/rt_thread.c's trampoline, whose
 * frame address becomes the thread's top (rt_stack_bounds_set): the
 * unwinder stops below it, so neither the trampoline nor libc's
 * thread-start frames are recorded.  The bottom (top minus the stack size)
 * lets the unwinder refuse frames elsewhere, e.g. on a signal's alternate
 * stack or a coroutine stack.  Threads created otherwise (raw clone) have
 * no known top and get one-frame stacks. */
#define _GNU_SOURCE
#include <sys/resource.h>

#include "rt_stack.h"
#include "runtime/base/rt_sys.h"

extern void *__libc_stack_end;

/* The calling thread's bounds (rt_stack.h reads them inline). */
__thread rt_stack_bounds_t rt_stack_bounds __attribute__((tls_model("initial-exec")));
#define top_state rt_stack_bounds.state
#define stack_top rt_stack_bounds.top
#define stack_bottom rt_stack_bounds.bottom

#define MAX_MAIN_STACK (1UL << 30)

/* RLIMIT_STACK: the main stack's growth limit and glibc's default thread
 * stack size. */
size_t rt_stack_rlimit(size_t if_unlimited) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return if_unlimited;
  return rl.rlim_cur;
}

void rt_stack_bounds_set(uintptr_t top, size_t size) {
  stack_top = top;
  stack_bottom = top && size < top ? top - size : 0;
  top_state = top ? 1 : 2;
}


uintptr_t rt_thread_stack_bounds_slow(uintptr_t *bottom) {
  if (top_state == 2)
    return 0;
  if (top_state == 0) {
    if (rt_gettid() == rt_getpid() && __libc_stack_end)
      rt_stack_bounds_set((uintptr_t)__libc_stack_end, rt_stack_rlimit(MAX_MAIN_STACK));
    else
      rt_stack_bounds_set(0, 0);
    if (top_state != 1)
      return 0;
  }
  *bottom = stack_bottom;
  return stack_top;
}

uintptr_t rt_thread_stack_top(void) {
  uintptr_t bottom;
  return rt_thread_stack_bounds(&bottom);
}
