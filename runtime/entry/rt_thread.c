/* rt_thread.c - the pthread_create interceptor: a new thread starts in
 * our trampoline, which sets its stack bounds for the unwinder (its frame
 * address is the top: record/rt_stack_bounds.c), registers its heap
 * cache, and with roots=1 its stack (record/rt_threads.c) before the
 * program's start routine runs.  No other file may
 * define pthread_create. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/record/rt_stack.h"
#include "runtime/record/rt_threads.h"

#define DEFAULT_STACK (8UL << 20) /* glibc's default with no rlimit */

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
  uintptr_t top = (uintptr_t)__builtin_frame_address(0);
  rt_stack_bounds_set(top, s.stack_size);
  rt_heap_thread_start();
  int slot = rt_threads_enter(s.stack_size < top ? top - s.stack_size : 0, top);
  void *r = s.fn(s.arg);
  rt_threads_leave(slot);
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
  if (__atomic_load_n(&rt_forwarding, __ATOMIC_RELAXED))
    return real(t, attr, fn, arg); /* records nothing: no trampoline */
  thread_start *s = rt_ialloc(sizeof(thread_start));
  if (!s)
    return 11;
  s->fn = fn;
  s->arg = arg;
  s->stack_size = 0;
  if (attr)
    pthread_attr_getstacksize(attr, &s->stack_size);
  if (!s->stack_size)
    s->stack_size = rt_stack_rlimit(DEFAULT_STACK);
  int r = real(t, attr, thread_trampoline, s);
  if (r)
    rt_ifree(s, sizeof(thread_start));
  return r;
}
