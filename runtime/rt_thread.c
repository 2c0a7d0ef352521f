/* rt_thread.c - per-thread stack bounds for the unwinder, and the
 * pthread_create interceptor that records them for new threads.
 *
 * The main thread's top is glibc's __libc_stack_end.  A thread created
 * through pthread_create starts in our trampoline, whose frame address
 * becomes the thread's top: the unwinder stops below it, so neither the
 * trampoline nor libc's thread-start frames are recorded.  The bottom (top
 * minus the stack size) lets the unwinder refuse frames elsewhere, e.g. on
 * a signal's alternate stack or a coroutine stack.  Threads created
 * otherwise (raw clone) have no known top and get one-frame stacks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sys/resource.h>

#include "rt_core.h"

extern void *__libc_stack_end;

/* The calling thread's bounds (rt_core.h reads them inline). */
__thread rt_stack_bounds_t rt_stack_bounds __attribute__((tls_model("initial-exec")));
#define top_state rt_stack_bounds.state
#define stack_top rt_stack_bounds.top
#define stack_bottom rt_stack_bounds.bottom

#define DEFAULT_STACK (8UL << 20) /* glibc's default with no rlimit */
#define MAX_MAIN_STACK (1UL << 30)

/* RLIMIT_STACK: the main stack's growth limit and glibc's default thread
 * stack size. */
static size_t stack_rlimit(size_t if_unlimited) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return if_unlimited;
  return rl.rlim_cur;
}

static void set_bounds(uintptr_t top, size_t size) {
  stack_top = top;
  stack_bottom = top && size < top ? top - size : 0;
  top_state = top ? 1 : 2;
}


uintptr_t rt_thread_stack_bounds_slow(uintptr_t *bottom) {
  if (top_state == 2)
    return 0;
  if (top_state == 0) {
    if (rt_gettid() == rt_getpid() && __libc_stack_end)
      set_bounds((uintptr_t)__libc_stack_end, stack_rlimit(MAX_MAIN_STACK));
    else
      set_bounds(0, 0);
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

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *,
                                 void *(*)(void *), void *);
static pthread_create_fn real_pthread_create;

typedef struct thread_start {
  void *(*fn)(void *);
  void *arg;
  size_t stack_size;
} thread_start;

__attribute__((noinline)) static void *thread_trampoline(void *p) {
  thread_start s = *(thread_start *)p;
  rt_ifree(p, sizeof(thread_start));
  set_bounds((uintptr_t)__builtin_frame_address(0), s.stack_size);
  rt_heap_thread_start();
  void *r = s.fn(s.arg);
  __asm__ volatile("" ::: "memory"); /* keep the call a call */
  return r;
}

RT_EXPORT RT_CALLS_LIBC int pthread_create(pthread_t *t, const pthread_attr_t *attr,
                                           void *(*fn)(void *), void *arg) {
  pthread_create_fn real = __atomic_load_n(&real_pthread_create, __ATOMIC_ACQUIRE);
  if (!real) {
    real = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real) {
      rt_report("ERROR: cannot find the real pthread_create");
      return 11; /* EAGAIN */
    }
    __atomic_store_n(&real_pthread_create, real, __ATOMIC_RELEASE);
  }
  thread_start *s = rt_ialloc(sizeof(thread_start));
  if (!s)
    return 11;
  s->fn = fn;
  s->arg = arg;
  s->stack_size = 0;
  if (attr)
    pthread_attr_getstacksize(attr, &s->stack_size);
  if (!s->stack_size)
    s->stack_size = stack_rlimit(DEFAULT_STACK);
  int r = real(t, attr, thread_trampoline, s);
  if (r)
    rt_ifree(s, sizeof(thread_start));
  return r;
}
