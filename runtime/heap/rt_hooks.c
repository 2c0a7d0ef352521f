/* rt_hooks.c - the sanitizer malloc/free hooks: the program's weak
 * __sanitizer_malloc_hook/__sanitizer_free_hook, the pairs installed by
 * __sanitizer_install_malloc_and_free_hooks, and running them for every
 * allocation and free (the heap calls them: rt_alloc.h, rt_heap.c). */
#include "rt_heap.h"

/* Weak hooks the program may define, plus up to 5 installed pairs.  Our
 * own definitions are aliases of empty functions: init compares them with
 * what the program linked, so that with no hook anywhere allocations skip
 * the calls (rt_hooks_maybe). */
static void no_malloc_hook(const volatile void *p, size_t n) {
  (void)p;
  (void)n;
}
static void no_free_hook(const volatile void *p) { (void)p; }
RT_EXPORT __attribute__((weak, alias("no_malloc_hook"))) void
__sanitizer_malloc_hook(const volatile void *p, size_t n);
RT_EXPORT __attribute__((weak, alias("no_free_hook"))) void
__sanitizer_free_hook(const volatile void *p);

typedef void (*malloc_hook_fn)(const volatile void *, size_t);
typedef void (*free_hook_fn)(const volatile void *);
#define MAX_HOOKS 5
static struct {
  malloc_hook_fn m;
  free_hook_fn f;
} hooks[MAX_HOOKS];
static int nhooks;

RT_EXPORT int __sanitizer_install_malloc_and_free_hooks(malloc_hook_fn m,
                                                        free_hook_fn f) {
  int i = __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE);
  if (i >= MAX_HOOKS)
    return 0;
  hooks[i].m = m;
  hooks[i].f = f;
  __atomic_store_n(&nhooks, i + 1, __ATOMIC_RELEASE);
  __atomic_store_n(&rt_hooks_maybe, 1, __ATOMIC_RELEASE);
  return i + 1;
}

int rt_hooks_maybe = 1;

void rt_hooks_init(void) {
  if (__sanitizer_malloc_hook == no_malloc_hook && __sanitizer_free_hook == no_free_hook)
    __atomic_store_n(&rt_hooks_maybe, __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE) != 0,
                     __ATOMIC_RELEASE);
}

void rt_run_malloc_hooks(const void *p, size_t n) {
  __sanitizer_malloc_hook(p, n);
  for (int i = 0, k = __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE); i < k; i++)
    if (hooks[i].m)
      hooks[i].m(p, n);
}

void rt_run_free_hooks(const void *p) {
  __sanitizer_free_hook(p);
  for (int i = 0, k = __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE); i < k; i++)
    if (hooks[i].f)
      hooks[i].f(p);
}
