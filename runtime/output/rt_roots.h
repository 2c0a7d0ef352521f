/* rt_roots.h - who holds the memory (roots=1): the census of the live heap
 * from its roots (rt_roots.c) and the `.roots` file beside the raw profile
 * (rt_roots_file.c, docs/roots-format.md). */
#ifndef MEMPROF_RT_ROOTS_H
#define MEMPROF_RT_ROOTS_H

#include "runtime/base/rt_internal.h"

/* A census's kind (docs/roots-format.md, section 4). */
enum { RT_ROOTS_ON_DEMAND = 1, RT_ROOTS_AT_DUMP = 2, RT_ROOTS_AT_EXIT = 3, RT_ROOTS_AT_HIGH = 4 };

/* After the flags and sampling: refuses roots=1 with sampling that hands
 * blocks to the C library, registers the main thread, and with
 * roots_peak_step_kb has the heap call for a census at each new high. */
RT_HIDDEN void rt_roots_init(void);
/* Where the calling thread's program frames start: the entry points that
 * may take a census (__memprof_heap_census, __memprof_profile_dump, the
 * exit dump) store the program's callee-saved registers and their own
 * frame address here first (RT_ROOTS_ENTER), so that the census scans
 * neither the runtime's frames (stale block addresses from its own walks)
 * nor misses what the program kept in registers.  regs[6]: a block only
 * the caller's return value holds (the census at a new high), else 0. */
typedef struct rt_roots_from {
  uintptr_t regs[7];
  uintptr_t frame;
} rt_roots_from;
RT_HIDDEN extern __thread rt_roots_from rt_roots_entry __attribute__((tls_model("initial-exec")));
#define RT_ROOTS_SAVE(from)                                                            \
  do {                                                                                 \
    __asm__ volatile("mov %%rbx, 0(%0)\n\tmov %%rbp, 8(%0)\n\tmov %%r12, 16(%0)\n\t"     \
                     "mov %%r13, 24(%0)\n\tmov %%r14, 32(%0)\n\tmov %%r15, 40(%0)"        \
                     :                                                                 \
                     : "r"((from)->regs)                                               \
                     : "memory");                                                      \
    (from)->regs[6] = 0;                                                               \
    (from)->frame = (uintptr_t)__builtin_frame_address(0);                             \
  } while (0)
#define RT_ROOTS_ENTER() RT_ROOTS_SAVE(&rt_roots_entry)
/* Takes a census now, from the calling thread (the registers and stack
 * rt_roots_entry gives), and keeps it for the file. */
RT_HIDDEN void rt_roots_census(int kind);
/* In a forked child: no census runs there. */
RT_HIDDEN void rt_roots_fork_child(void);
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
/* Appends one census (docs/roots-format.md, section 4) to the kept ones;
 * -1 when it is left out (out of memory, reported). */
RT_HIDDEN int rt_roots_keep(const struct rr_census *c, int kind);

#endif
