/* rt_stack.h - stack capture and the stack depot (rt_stack.c), each
 * depot node carrying its context's MIB entry, and the calling thread's
 * stack bounds (rt_stack_bounds.c). */
#ifndef MEMPROF_RT_STACK_H
#define MEMPROF_RT_STACK_H

#include "rt_mibtable.h"
#include "runtime/base/rt_ialloc.h"

#define RT_MAX_STACK 256
RT_HIDDEN void rt_stack_init(void); /* by init: no lazy setup under signals */
RT_HIDDEN uint32_t rt_stack_capture(rt_caller c); /* the stack's id */
/* The same in two steps, so that the allocator can do its own work while
 * the depot bucket (prefetched by the first step) comes from memory. */
#define RT_MAX_ENC (RT_MAX_STACK * 12) /* rt_stack.c's encoding at worst */
typedef struct rt_captured {
  uint64_t hash;
  uint32_t n, len;
  uint8_t enc[RT_MAX_ENC];
} rt_captured;
RT_HIDDEN uint32_t rt_stack_unwind(rt_caller c, rt_captured *cap);
/* A ref to the stack's depot node: what blocks keep (0: no stack).  It
 * gives the context's MIB entry without a load (rt_stack_entry). */
RT_HIDDEN uint32_t rt_stack_intern(const rt_captured *cap);
RT_HIDDEN uint32_t rt_stack_id(uint32_t ref);
/* The PCs of stack `id` into pcs[RT_MAX_STACK]; returns how many (0 if
 * unknown).  rt_stack_depth gives the count alone. */
RT_HIDDEN uint32_t rt_stack_get(uint32_t id, uintptr_t *pcs);
RT_HIDDEN uint32_t rt_stack_depth(uint32_t id);
RT_HIDDEN uint32_t rt_stack_max_id(void);
RT_HIDDEN void rt_stack_fork_prepare(void);
RT_HIDDEN void rt_stack_fork_parent(void);
RT_HIDDEN void rt_stack_fork_child(void);
/* Highest stack address of the calling thread (0 = unknown). */
RT_HIDDEN uintptr_t rt_thread_stack_top(void);
/* Same, also giving the lowest address frames may have. */
typedef struct rt_stack_bounds_t {
  int state; /* 0 = not looked up yet, 1 = known (top), 2 = unknown */
  uintptr_t top, bottom;
} rt_stack_bounds_t;
RT_HIDDEN extern __thread rt_stack_bounds_t rt_stack_bounds
    __attribute__((tls_model("initial-exec")));
RT_HIDDEN uintptr_t rt_thread_stack_bounds_slow(uintptr_t *bottom);
static inline uintptr_t rt_thread_stack_bounds(uintptr_t *bottom) {
  if (RT_LIKELY(rt_stack_bounds.state == 1)) {
    *bottom = rt_stack_bounds.bottom;
    return rt_stack_bounds.top;
  }
  return rt_thread_stack_bounds_slow(bottom);
}

/* The entry of a stack ref, kept with its depot node (ref 0: stacks that
 * could not be captured or stored). */
RT_HIDDEN extern rt_mib_entry rt_no_stack_entry;
static inline rt_mib_entry *rt_stack_entry(uint32_t ref) {
  return ref ? (rt_mib_entry *)rt_perm_at(ref) : &rt_no_stack_entry;
}
/* The same by stack id; NULL for an id that names no stack. */
RT_HIDDEN rt_mib_entry *rt_stack_entry_of_id(uint32_t id);
static inline void rt_prefetch_entry(const rt_mib_entry *e) {
  const char *p = (const char *)e;
  __builtin_prefetch(p, 1);
  __builtin_prefetch(p + 64, 1);
  __builtin_prefetch(p + sizeof(*e) - 1, 1);
}
/* Set the calling thread's bounds: top, and the stack's size (0: unknown)
 * (entry/rt_thread.c's trampoline). */
RT_HIDDEN void rt_stack_bounds_set(uintptr_t top, size_t size);
/* RLIMIT_STACK, or if_unlimited: glibc's default thread stack size. */
RT_HIDDEN size_t rt_stack_rlimit(size_t if_unlimited);

#endif
