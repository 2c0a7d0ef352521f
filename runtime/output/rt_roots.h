/* rt_roots.h - who holds the memory (roots=1): the census of the live heap
 * from its roots (rt_roots.c) and the `.roots` file beside the raw profile
 * (rt_roots_file.c, docs/roots-format.md). */
#ifndef MEMPROF_RT_ROOTS_H
#define MEMPROF_RT_ROOTS_H

#include "runtime/base/rt_internal.h"

/* A census's kind (docs/roots-format.md, section 4). */
enum { RT_ROOTS_ON_DEMAND = 1, RT_ROOTS_AT_DUMP = 2, RT_ROOTS_AT_EXIT = 3 };

/* After the flags and sampling: refuses roots=1 with sampling that hands
 * blocks to the C library, and registers the main thread. */
RT_HIDDEN void rt_roots_init(void);
/* Where the calling thread's program frames start: the entry points that
 * may take a census (__memprof_heap_census, __memprof_profile_dump, the
 * exit dump) store the program's callee-saved registers and their own
 * frame address here first (RT_ROOTS_ENTER), so that the census scans
 * neither the runtime's frames (stale block addresses from its own walks)
 * nor misses what the program kept in registers. */
typedef struct rt_roots_from {
  uintptr_t regs[6];
  uintptr_t frame;
} rt_roots_from;
RT_HIDDEN extern __thread rt_roots_from rt_roots_entry __attribute__((tls_model("initial-exec")));
#define RT_ROOTS_ENTER()                                                               \
  do {                                                                                 \
    __asm__ volatile("mov %%rbx, 0(%0)\n\tmov %%rbp, 8(%0)\n\tmov %%r12, 16(%0)\n\t"     \
                     "mov %%r13, 24(%0)\n\tmov %%r14, 32(%0)\n\tmov %%r15, 40(%0)"        \
                     :                                                                 \
                     : "r"(rt_roots_entry.regs)                                        \
                     : "memory");                                                      \
    rt_roots_entry.frame = (uintptr_t)__builtin_frame_address(0);                      \
  } while (0)
/* Takes a census now, from the calling thread (the registers and stack
 * rt_roots_entry gives), and keeps it for the file. */
RT_HIDDEN void rt_roots_census(int kind);
/* Set by the exit dump: its census is the exit's. */
RT_HIDDEN extern int rt_roots_at_exit;
/* Named roots (__memprof_add_root / __memprof_remove_root). */
RT_HIDDEN void rt_roots_add_named(const char *name, const void *ptr);
RT_HIDDEN void rt_roots_remove_named(const void *ptr);
/* Writes "<raw path>.roots" with every census kept so far, the raw
 * profile having raw_bytes bytes now (rt_roots_file.c). */
RT_HIDDEN void rt_roots_write(const char *raw_path, uint64_t raw_bytes);

/* ---- rt_roots_file.c, for rt_roots.c ---- */
struct rr_census;
/* Appends one census (docs/roots-format.md, section 4) to the kept ones. */
RT_HIDDEN void rt_roots_keep(const struct rr_census *c, int kind);

#endif
